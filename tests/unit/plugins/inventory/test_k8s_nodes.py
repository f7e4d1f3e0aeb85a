# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the k8s_nodes inventory plugin: the pure functions over Node objects, then the plugin
itself parsing an inventory file with the API call replaced by canned NodeList pages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import yaml

from ansible import constants as C
from ansible.errors import AnsibleParserError
from ansible.inventory.data import InventoryData
from ansible.parsing.dataloader import DataLoader
from ansible.template import trust_as_template

from ansible_collections.nodeops.numa_drift.plugins.inventory import k8s_nodes

MM_ERROR = ("start memory manager error: [memorymanager] the expected machine state is different from the "
            "real one")


def make_node(name, ready="True", message="kubelet is posting ready status", labels=None, addresses=None,
              unschedulable=None, extra_conditions=()):
    """A Node as GET /api/v1/nodes returns it (only the fields the plugin reads, plus some noise)."""
    conditions = [
        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
         "message": "kubelet has sufficient memory available"},
    ]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready, "reason": "KubeletReady", "message": message})
    conditions.extend(extra_conditions)
    if addresses is None:
        addresses = [{"type": "InternalIP", "address": "10.0.0.%d" % (len(name) + 10)},
                     {"type": "Hostname", "address": name}]
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels if labels is not None else {"kubernetes.io/hostname": name},
                     "resourceVersion": "7"},
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {"conditions": conditions, "addresses": addresses},
    }
    if unschedulable is not None:
        node["spec"]["unschedulable"] = unschedulable
    return node


# Readiness


@pytest.mark.parametrize("status, expected", [("True", True), ("False", False), ("Unknown", False),
                                              (None, False)])
def test_is_ready_only_when_the_ready_condition_says_the_string_true(status, expected):
    assert k8s_nodes.is_ready(make_node("n1", ready=status)) is expected


def test_a_node_without_status_is_not_ready_and_has_no_message():
    node = {"metadata": {"name": "bare"}}
    assert k8s_nodes.is_ready(node) is False
    assert k8s_nodes.ready_message(node) == ""
    assert k8s_nodes.has_memory_manager_error(node) is False


def test_ready_message_is_the_ready_conditions_message_not_another_conditions():
    node = make_node("n1", ready="Unknown", message="Kubelet stopped posting node status.")
    assert k8s_nodes.ready_message(node) == "Kubelet stopped posting node status."


# Memory manager detection


@pytest.mark.parametrize("text", [
    MM_ERROR,
    "container runtime ok; memory manager refused the checkpoint",
    "could not restore state from checkpoint: /var/lib/kubelet/memory_manager_state checksum mismatch",
    "MemoryManager: Static policy failed",
    "memory-manager state invalid",
])
def test_names_memory_manager_recognises_kubelets_wordings(text):
    assert k8s_nodes.names_memory_manager(text) is True


@pytest.mark.parametrize("text", [None, "", "Kubelet stopped posting node status.",
                                  "kubelet has sufficient memory available", "cpu manager: state mismatch"])
def test_names_memory_manager_ignores_other_messages(text):
    assert k8s_nodes.names_memory_manager(text) is False


def test_memory_manager_error_from_the_ready_message():
    node = make_node("n1", ready="False", message=MM_ERROR)
    assert k8s_nodes.has_memory_manager_error(node) is True


def test_memory_manager_error_from_another_condition_such_as_node_problem_detector():
    npd = {"type": "KubeletMemoryManagerProblem", "status": "True", "reason": "CheckpointRefused",
           "message": "kubelet: could not restore state from checkpoint memory_manager_state"}
    node = make_node("n1", ready="Unknown", message="Kubelet stopped posting node status.", extra_conditions=[npd])
    assert k8s_nodes.has_memory_manager_error(node) is True
    assert k8s_nodes.ready_message(node) == "Kubelet stopped posting node status."


def test_no_memory_manager_error_on_a_healthy_node():
    assert k8s_nodes.has_memory_manager_error(make_node("n1")) is False


# Addresses


ADDRESSES = [{"type": "Hostname", "address": "w1"}, {"type": "ExternalIP", "address": "203.0.113.7"},
             {"type": "InternalIP", "address": "10.1.2.3"}, {"type": "InternalIP", "address": "fd00::3"}]


@pytest.mark.parametrize("address_type, expected", [("InternalIP", "10.1.2.3"), ("ExternalIP", "203.0.113.7"),
                                                    ("Hostname", "w1")])
def test_node_address_takes_the_first_address_of_the_type(address_type, expected):
    assert k8s_nodes.node_address(ADDRESSES, address_type) == expected


def test_node_address_is_none_when_the_type_is_missing_or_empty():
    assert k8s_nodes.node_address([{"type": "Hostname", "address": "w1"}], "InternalIP") is None
    assert k8s_nodes.node_address([{"type": "InternalIP", "address": ""}], "InternalIP") is None
    assert k8s_nodes.node_address(None, "InternalIP") is None


# Summaries, groups and host variables


def test_summarize_node_keeps_what_the_inventory_uses():
    node = make_node("w-1", ready="False", message=MM_ERROR, labels={"pool": "numa"}, addresses=ADDRESSES,
                     unschedulable=True)
    assert k8s_nodes.summarize_node(node) == {
        "name": "w-1",
        "labels": {"pool": "numa"},
        "addresses": ADDRESSES,
        "ready": False,
        "ready_message": MM_ERROR,
        "memory_manager_error": True,
        "unschedulable": True,
    }


def test_summary_is_unschedulable_false_when_the_spec_says_nothing():
    assert k8s_nodes.summarize_node(make_node("n1"))["unschedulable"] is False


@pytest.mark.parametrize("text, expected", [
    ("label_pool_numa", "label_pool_numa"),
    ("label_topology.kubernetes.io/zone_eu-west-1a", "label_topology_kubernetes_io_zone_eu_west_1a"),
    ("label_a b:c", "label_a_b_c"),
])
def test_safe_group_name(text, expected):
    assert k8s_nodes.safe_group_name(text) == expected


def test_label_group_names_only_for_chosen_keys_present_on_the_node():
    labels = {"topology.kubernetes.io/zone": "zone-a", "node-role.kubernetes.io/worker": "", "pool": "numa"}
    keys = ["topology.kubernetes.io/zone", "node-role.kubernetes.io/worker", "absent/key"]
    assert k8s_nodes.label_group_names(labels, keys) == [
        "label_topology_kubernetes_io_zone_zone_a",
        "label_node_role_kubernetes_io_worker",
    ]
    assert k8s_nodes.label_group_names(labels, []) == []
    assert k8s_nodes.label_group_names(labels, None) == []


def test_host_groups_by_readiness_memory_manager_and_labels():
    ready = k8s_nodes.summarize_node(make_node("a", labels={"pool": "x"}))
    broken = k8s_nodes.summarize_node(make_node("b", ready="False", message=MM_ERROR, labels={"pool": "y"}))
    unknown = k8s_nodes.summarize_node(make_node("c", ready="Unknown", message="Kubelet stopped posting node status."))
    assert k8s_nodes.host_groups(ready, ["pool"]) == ["ready", "label_pool_x"]
    assert k8s_nodes.host_groups(broken, ["pool"]) == ["notready", "memory_manager_error", "label_pool_y"]
    assert k8s_nodes.host_groups(unknown, ["pool"]) == ["notready"]


def test_host_variables_follow_the_contract():
    summary = k8s_nodes.summarize_node(make_node("w-1", ready="False", message=MM_ERROR, labels={"pool": "numa"},
                                                 addresses=ADDRESSES, unschedulable=True))
    assert k8s_nodes.host_variables(summary, "InternalIP") == {
        "ansible_host": "10.1.2.3",
        "remediate_node_name": "w-1",
        "k8s_node_ready": False,
        "k8s_node_labels": {"pool": "numa"},
        "k8s_node_condition_message": MM_ERROR,
        "k8s_node_unschedulable": True,
    }
    assert k8s_nodes.host_variables(summary, "ExternalIP")["ansible_host"] == "203.0.113.7"


def test_host_variables_leave_ansible_host_unset_without_such_an_address():
    summary = k8s_nodes.summarize_node(make_node("w-1", addresses=[{"type": "Hostname", "address": "w-1"}]))
    assert "ansible_host" not in k8s_nodes.host_variables(summary, "InternalIP")


@pytest.mark.parametrize("readiness, expected", [("all", ["a", "b"]), ("ready", ["a"]), ("notready", ["b"])])
def test_selected_by_readiness(readiness, expected):
    summaries = [k8s_nodes.summarize_node(make_node("a")), k8s_nodes.summarize_node(make_node("b", ready="False"))]
    assert [s["name"] for s in summaries if k8s_nodes.selected(s, readiness)] == expected


def test_summarize_node_list_joins_pages_sorts_and_drops_nameless_items():
    pages = [{"items": [make_node("n3"), {"metadata": {}}]}, {"items": [make_node("n1")]}, {"items": None}]
    assert [s["name"] for s in k8s_nodes.summarize_node_list(pages)] == ["n1", "n3"]


# Error messages


def test_api_error_message_for_rejected_credentials_names_the_url():
    body = '{"kind":"Status","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
    message = k8s_nodes.api_error_message("https://10.0.0.1:6443", 401, "Unauthorized", body)
    assert "https://10.0.0.1:6443" in message
    assert "401 Unauthorized: Unauthorized" in message
    assert "api_key" in message


def test_api_error_message_for_forbidden_says_which_permission_is_missing():
    body = ('{"kind":"Status","message":"nodes is forbidden: User \\"system:serviceaccount:awx:runner\\" cannot '
            'list resource \\"nodes\\""}')
    message = k8s_nodes.api_error_message("https://api:6443", 403, "Forbidden", body)
    assert "403 Forbidden" in message and "'list' on 'nodes'" in message
    assert 'cannot list resource "nodes"' in message


def test_api_error_message_for_tls_failures():
    message = k8s_nodes.api_error_message("https://api:6443", 0, "SSLError\ncertificate verify failed", None)
    assert "cannot talk to the Kubernetes API at https://api:6443: SSLError: certificate verify failed" in message
    assert "ca_cert" in message


def test_api_error_message_for_other_statuses_with_a_non_json_body():
    message = k8s_nodes.api_error_message("http://127.0.0.1:1234", 503, "Service Unavailable", "outage\n")
    assert message == "the Kubernetes API at http://127.0.0.1:1234 answered 503 Service Unavailable: outage"


@pytest.mark.parametrize("token", ["abc.def", "Bearer abc.def", " bearer  abc.def \n"])
def test_strip_bearer(token):
    assert k8s_nodes.strip_bearer(token) == "abc.def"


# The plugin, with its options given directly (the integration tests run it through ansible-inventory)

PLUGIN_DEFAULTS = {
    "plugin": "nodeops.numa_drift.k8s_nodes",
    "kubeconfig": None,
    "context": None,
    "host": None,
    "api_key": None,
    "validate_certs": None,
    "ca_cert": None,
    "request_timeout": 30,
    "label_selector": None,
    "readiness": "all",
    "address_type": "InternalIP",
    "label_groups": [],
    "compose": {},
    "groups": {},
    "keyed_groups": [],
    "strict": False,
    "use_extra_vars": False,
    "leading_separator": True,
    "cache": False,
}


def make_plugin(**options):
    """An InventoryModule with these options, an empty inventory and a loader, as parse() leaves it."""
    plugin = k8s_nodes.InventoryModule()
    plugin._options = dict(PLUGIN_DEFAULTS, **options)  # what set_options() fills from the file and env
    plugin.loader = DataLoader()
    plugin.inventory = InventoryData()
    plugin._vars = {}
    return plugin


def populate(pages, **options):
    plugin = make_plugin(**options)
    plugin._populate(k8s_nodes.summarize_node_list(pages))
    return plugin.inventory


def members(inventory, group):
    return sorted(host.name for host in inventory.groups[group].get_hosts())


FLEET = [{"items": [
    make_node("sbx-node-01", labels={"pool": "numa", "topology.kubernetes.io/zone": "zone-a"}),
    make_node("sbx-node-02", ready="False", message=MM_ERROR, labels={"pool": "numa"}, unschedulable=True),
    make_node("sbx-node-03", ready="Unknown", message="Kubelet stopped posting node status.", labels={}),
]}]


@pytest.mark.parametrize("name, expected", [("cluster.k8s_nodes.yml", True), ("notready.k8s_nodes.yaml", True),
                                            ("k8s_nodes.yml", True), ("cluster.yml", False),
                                            ("cluster.k8s.yml", False)])
def test_verify_file_by_name(tmp_path, name, expected):
    path = tmp_path / name
    path.write_text("plugin: nodeops.numa_drift.k8s_nodes\n")
    assert k8s_nodes.InventoryModule().verify_file(str(path)) is expected


def test_verify_file_rejects_a_missing_file(tmp_path):
    assert k8s_nodes.InventoryModule().verify_file(str(tmp_path / "gone.k8s_nodes.yml")) is False


def test_populate_groups_and_host_variables():
    inventory = populate(FLEET, label_groups=["pool"])
    assert members(inventory, "ready") == ["sbx-node-01"]
    assert members(inventory, "notready") == ["sbx-node-02", "sbx-node-03"]
    assert members(inventory, "memory_manager_error") == ["sbx-node-02"]
    assert members(inventory, "label_pool_numa") == ["sbx-node-01", "sbx-node-02"]
    node2 = inventory.get_host("sbx-node-02").get_vars()
    assert node2["ansible_host"] == "10.0.0.21"
    assert node2["remediate_node_name"] == "sbx-node-02"
    assert node2["k8s_node_ready"] is False
    assert node2["k8s_node_labels"] == {"pool": "numa"}
    assert node2["k8s_node_condition_message"] == MM_ERROR
    assert node2["k8s_node_unschedulable"] is True


def test_populate_readiness_notready_adds_only_notready_nodes_and_keeps_every_group():
    inventory = populate(FLEET, readiness="notready")
    assert sorted(inventory.hosts) == ["sbx-node-02", "sbx-node-03"]
    assert members(inventory, "ready") == []
    assert members(inventory, "notready") == ["sbx-node-02", "sbx-node-03"]
    assert members(inventory, "memory_manager_error") == ["sbx-node-02"]


def test_populate_readiness_ready():
    inventory = populate(FLEET, readiness="ready")
    assert sorted(inventory.hosts) == ["sbx-node-01"]


def test_populate_empty_cluster_still_has_the_readiness_groups():
    inventory = populate([{"items": []}])
    assert inventory.hosts == {}
    assert {"ready", "notready", "memory_manager_error"} <= set(inventory.groups)


def test_populate_constructed_compose_groups_and_keyed_groups():
    # Expressions from an inventory file are trusted templates (the loader tags them so).
    inventory = populate(
        FLEET,
        compose={"ansible_user": trust_as_template("'core'"),
                 "pool": trust_as_template("k8s_node_labels.pool | default('none')")},
        groups={"cordoned": trust_as_template("k8s_node_unschedulable")},
        keyed_groups=[{"key": trust_as_template("k8s_node_labels"), "prefix": "k8s"}],
    )
    assert inventory.get_host("sbx-node-01").get_vars()["ansible_user"] == "core"
    assert inventory.get_host("sbx-node-03").get_vars()["pool"] == "none"
    assert members(inventory, "cordoned") == ["sbx-node-02"]
    assert members(inventory, "k8s_pool_numa") == ["sbx-node-01", "sbx-node-02"]
    assert members(inventory, "k8s_topology_kubernetes_io_zone_zone_a") == ["sbx-node-01"]


def test_populate_address_type_hostname():
    inventory = populate(FLEET, address_type="Hostname")
    assert inventory.get_host("sbx-node-01").get_vars()["ansible_host"] == "sbx-node-01"


def test_populate_warns_when_a_node_lacks_the_address_type(monkeypatch):
    warnings = []
    plugin = make_plugin(address_type="ExternalIP")
    monkeypatch.setattr(plugin.display, "warning", warnings.append)
    plugin._populate(k8s_nodes.summarize_node_list(FLEET))
    assert "ansible_host" not in plugin.inventory.get_host("sbx-node-01").get_vars()
    assert any("sbx-node-01 has no ExternalIP address" in warning for warning in warnings)


# Client configuration (kubernetes.core's precedence)


def test_host_and_token_are_used_as_given():
    configuration = make_plugin(host="https://10.0.0.1:6443/", api_key="Bearer t0ken",
                                validate_certs=False)._client_configuration()
    assert configuration.host == "https://10.0.0.1:6443"
    assert bearer(configuration) == "Bearer t0ken"
    assert configuration.verify_ssl is False


def bearer(configuration):
    """The Authorization header the client will send."""
    return configuration.auth_settings()["BearerToken"]["value"]


def write_kubeconfig(tmp_path):
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "one",
        "clusters": [
            {"name": "c1", "cluster": {"server": "https://one.example.invalid:6443"}},
            {"name": "c2", "cluster": {"server": "http://127.0.0.1:8001", "insecure-skip-tls-verify": True}},
        ],
        "users": [{"name": "u1", "user": {"token": "token-one"}}, {"name": "u2", "user": {"token": "token-two"}}],
        "contexts": [{"name": "one", "context": {"cluster": "c1", "user": "u1"}},
                     {"name": "two", "context": {"cluster": "c2", "user": "u2"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    return str(path)


def test_kubeconfig_and_context_select_server_and_user(tmp_path):
    configuration = make_plugin(kubeconfig=write_kubeconfig(tmp_path), context="two")._client_configuration()
    assert configuration.host == "http://127.0.0.1:8001"
    assert bearer(configuration) == "Bearer token-two"
    assert configuration.verify_ssl is False


def test_kubeconfig_current_context_with_ca_cert_and_token_overrides(tmp_path):
    ca = tmp_path / "ca.crt"
    ca.write_text("read only when a request is made\n")
    configuration = make_plugin(kubeconfig=write_kubeconfig(tmp_path), ca_cert=str(ca),
                                api_key="override")._client_configuration()
    assert configuration.host == "https://one.example.invalid:6443"
    assert bearer(configuration) == "Bearer override"
    assert configuration.ssl_ca_cert == str(ca)
    assert configuration.verify_ssl is True


def test_host_without_token_overrides_the_kubeconfig_server(tmp_path):
    configuration = make_plugin(kubeconfig=write_kubeconfig(tmp_path),
                                host="https://lb.example.invalid:6443")._client_configuration()
    assert configuration.host == "https://lb.example.invalid:6443"
    assert bearer(configuration) == "Bearer token-one"


def test_no_settings_fall_back_to_the_kubeconfig_environment_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setattr(k8s_nodes.kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION",
                        write_kubeconfig(tmp_path))
    configuration = make_plugin()._client_configuration()
    assert configuration.host == "https://one.example.invalid:6443"


KUBECONFIG_ADVICE = ("; set kubeconfig in notready.k8s_nodes.yml to a readable kubeconfig file of the cluster and context to one of its "
                     "contexts (unset: its current context); or set host and api_key (each also as K8S_AUTH_KUBECONFIG, K8S_AUTH_CONTEXT, "
                     "K8S_AUTH_HOST, K8S_AUTH_API_KEY)")


def kubeconfig_error(plugin):
    """The message of the plugin's failure to set up its client, parsing the source notready.k8s_nodes.yml."""
    plugin._source = "/srv/inventory/notready.k8s_nodes.yml"
    with pytest.raises(AnsibleParserError) as raised:
        plugin._client_configuration()
    return str(raised.value)


@pytest.fixture
def no_kube_environment(monkeypatch, tmp_path):
    for name in ("KUBERNETES_SERVICE_HOST", "KUBECONFIG", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def test_missing_kubeconfig_names_the_path_and_the_option(tmp_path, no_kube_environment):
    missing = os.path.join(str(tmp_path), "nope", "kubeconfig")
    assert kubeconfig_error(make_plugin(kubeconfig=missing)) == (
        "nodeops.numa_drift.k8s_nodes: the kubeconfig %s (kubeconfig in notready.k8s_nodes.yml) does not exist"
        % missing + KUBECONFIG_ADVICE)


def test_a_kubeconfig_that_cannot_be_read_names_the_path_and_the_option(tmp_path, no_kube_environment):
    assert kubeconfig_error(make_plugin(kubeconfig=str(tmp_path))) == (
        "nodeops.numa_drift.k8s_nodes: the kubeconfig %s (kubeconfig in notready.k8s_nodes.yml) cannot be read "
        "(Is a directory)" % tmp_path + KUBECONFIG_ADVICE)


def test_no_kubeconfig_at_all_names_the_default_path_and_the_option(tmp_path, monkeypatch, no_kube_environment):
    monkeypatch.setattr(k8s_nodes.kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", "~/.kube/config")
    assert kubeconfig_error(make_plugin()) == (
        "nodeops.numa_drift.k8s_nodes: the kubeconfig %s/home/.kube/config (the default; kubeconfig in notready.k8s_nodes.yml "
        "is not set) does not exist" % tmp_path + KUBECONFIG_ADVICE)


def test_unknown_context_names_the_file_the_context_and_the_options(tmp_path, no_kube_environment):
    path = write_kubeconfig(tmp_path)
    assert kubeconfig_error(make_plugin(kubeconfig=path, context="three")) == (
        "nodeops.numa_drift.k8s_nodes: cannot use the kubeconfig %s (kubeconfig in notready.k8s_nodes.yml) with "
        "the context 'three' (context): Invalid kube-config file. Expected object with name three in %s/contexts list"
        % (path, path) + KUBECONFIG_ADVICE)


def test_a_source_that_cannot_list_the_nodes_shows_its_message_as_the_error_and_fails_the_run(tmp_path, monkeypatch, no_kube_environment):
    monkeypatch.setattr(C, "INVENTORY_ANY_UNPARSED_IS_FAILED", False)
    plugin = make_plugin(kubeconfig=str(tmp_path / "missing"))
    plugin._source = "/srv/inventory/notready.k8s_nodes.yml"
    plugin._read_config_data = lambda path: None
    shown = []
    monkeypatch.setattr(plugin.display, "error", shown.append)
    with pytest.raises(AnsibleParserError) as raised:
        plugin.parse(InventoryData(), DataLoader(), "/srv/inventory/notready.k8s_nodes.yml", cache=False)
    assert str(raised.value) == "nodeops.numa_drift.k8s_nodes could not list the Nodes (the error above); the run stops"
    assert shown == ["nodeops.numa_drift.k8s_nodes: the kubeconfig %s/missing (kubeconfig in notready.k8s_nodes.yml) does not exist"
                     % tmp_path + KUBECONFIG_ADVICE]
    assert C.INVENTORY_ANY_UNPARSED_IS_FAILED is True  # Ansible's inventory manager then stops the run


# The directory that holds ansible_collections/nodeops/numa_drift (the root conftest.py makes it for plain pytest).
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(list(sys.modules["ansible_collections.nodeops.numa_drift"].__path__)[0])))


@pytest.mark.parametrize("command", ["ansible-playbook", "ansible-inventory"])
def test_the_headline_command_with_no_kubeconfig_fails_with_the_plugins_message_once(tmp_path, command):
    # It used to exit 0 ("skipping: no hosts matched") with the message among the parser warnings, unless the user had set
    # [inventory] unparsed_is_failed. Nothing is set here but the collection's path.
    source = tmp_path / "notready.k8s_nodes.yml"
    source.write_text("plugin: nodeops.numa_drift.k8s_nodes\nreadiness: notready\n")
    playbook = tmp_path / "site.yml"
    playbook.write_text("- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.ping:\n")
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("K8S_AUTH_", "ANSIBLE_", "KUBERNETES_"))
                   and key != "KUBECONFIG"}
    environment.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1", HOME=str(tmp_path / "home"),
                       ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    arguments = [str(playbook)] if command == "ansible-playbook" else ["--graph"]
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), command), "-i", str(source)] + arguments, env=environment,
                          capture_output=True, text=True, timeout=120, check=False)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    message = ("[ERROR]: nodeops.numa_drift.k8s_nodes: the kubeconfig %s/home/.kube/config (the default; kubeconfig in notready.k8s_nodes.yml "
               "is not set) does not exist" % tmp_path + KUBECONFIG_ADVICE)
    assert said.count(message) == 1, said
    assert said.count("does not exist") == 1, said
    assert "[ERROR]: Completely failed to parse inventory source %s" % source in said
    assert "no hosts matched" not in said


def test_missing_kubernetes_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(k8s_nodes, "HAS_KUBERNETES", False)
    monkeypatch.setattr(k8s_nodes, "KUBERNETES_IMPORT_ERROR", ImportError("No module named 'kubernetes'"))
    with pytest.raises(AnsibleParserError) as raised:
        make_plugin(host="https://10.0.0.1:6443", api_key="t")._fetch_summaries()
    assert "needs the 'kubernetes' Python package" in str(raised.value)
    assert "No module named 'kubernetes'" in str(raised.value)
    assert "python -m pip install kubernetes" in str(raised.value)


def test_empty_settings_count_as_unset(tmp_path):
    configuration = make_plugin(kubeconfig=write_kubeconfig(tmp_path), context="", host="",
                                api_key="")._client_configuration()
    assert configuration.host == "https://one.example.invalid:6443"
    assert bearer(configuration) == "Bearer token-one"
