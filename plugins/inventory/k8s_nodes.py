# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
name: k8s_nodes
short_description: Kubernetes Nodes as hosts, grouped by readiness
version_added: 0.1.0
description:
  - Lists the Nodes of a Kubernetes cluster through its API server and adds one host per Node, named after
    the Node, so that C(remediate_node_name) of the C(nodeops.numa_drift.remediate) role is right without
    further configuration.
  - Puts every Node in C(ready) or C(notready) (the Node's C(Ready) condition is not C("True"), including
    C(Unknown) and a missing condition), and in C(memory_manager_error) when the message of the C(Ready)
    condition, or of any other condition, names kubelet's memory manager (C(memorymanager), C(memory manager)
    or C(memory_manager_state)). These three groups always exist, possibly empty.
  - Optionally adds C(label_<key>_<value>) groups for chosen label keys, and supports the C(compose),
    C(groups) and C(keyed_groups) options of constructed inventories and inventory caching.
  - Sets C(ansible_host) to the Node's C(InternalIP) (or another address type), and the host variables
    C(remediate_node_name), C(k8s_node_ready), C(k8s_node_labels), C(k8s_node_condition_message) and
    C(k8s_node_unschedulable).
  - The inventory source must be a YAML file whose name ends with C(k8s_nodes.yml) or C(k8s_nodes.yaml),
    whose O(plugin) is V(nodeops.numa_drift.k8s_nodes).
  - Connection settings follow C(kubernetes.core) - a host and a token (C(host) with C(api_key)) are used
    as given; else a kubeconfig file (C(kubeconfig) and/or C(context)); with none of these set, the
    in-cluster service account when running in a pod, else the default kubeconfig (C($KUBECONFIG) or
    C(~/.kube/config)). The C(K8S_AUTH_*) environment variables set each option that the file does not.
requirements:
  - kubernetes (the Kubernetes Python client) on the controller, C(python -m pip install kubernetes)
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: Marks the file as an inventory source for this plugin.
    required: true
    type: str
    choices: [nodeops.numa_drift.k8s_nodes]
  kubeconfig:
    description:
      - Path to a kubeconfig file.
      - When neither this nor O(context) nor O(host) with O(api_key) is set, the in-cluster service account
        is tried, then the Kubernetes client's default kubeconfig (C($KUBECONFIG), else C(~/.kube/config)).
    type: path
    env:
      - name: K8S_AUTH_KUBECONFIG
  context:
    description: Name of a context in the kubeconfig file; its current context when not set.
    type: str
    env:
      - name: K8S_AUTH_CONTEXT
  host:
    description:
      - URL of the API server, for example C(https://10.0.0.1:6443).
      - With O(api_key), no kubeconfig is read; otherwise it overrides the server of the kubeconfig.
    type: str
    env:
      - name: K8S_AUTH_HOST
  api_key:
    description:
      - Bearer token to authenticate with the API server (a C(Bearer ) prefix is accepted and dropped).
      - Overrides the credentials of the kubeconfig.
    type: str
    env:
      - name: K8S_AUTH_API_KEY
  validate_certs:
    description:
      - Whether to verify the API server's TLS certificate.
      - When not set, the kubeconfig's setting applies (verification on, unless it says
        C(insecure-skip-tls-verify)).
    type: bool
    aliases: [verify_ssl]
    env:
      - name: K8S_AUTH_VERIFY_SSL
  ca_cert:
    description: Path to the CA certificate (full chain) that signed the API server's certificate.
    type: path
    aliases: [ssl_ca_cert]
    env:
      - name: K8S_AUTH_SSL_CA_CERT
  request_timeout:
    description: Seconds to wait for each answer of the API server before giving up.
    type: int
    default: 30
  label_selector:
    description:
      - Only list Nodes matching this label selector (evaluated by the API server), for example
        C(node-role.kubernetes.io/worker) or C(pool in (numa-a, numa-b)).
    type: str
  readiness:
    description:
      - Which Nodes become hosts. V(all) adds every Node; V(notready) only the Nodes that are not Ready
        (for an inventory file that targets exactly the Nodes to remediate); V(ready) only the Ready ones.
      - The C(ready), C(notready) and C(memory_manager_error) groups are created in every case.
    type: str
    default: all
    choices: [all, ready, notready]
  address_type:
    description:
      - The Node address (C(status.addresses)) used for C(ansible_host).
      - When the Node has no address of this type, C(ansible_host) is not set (Ansible then connects to
        the Node name) and a warning names the Node.
    type: str
    default: InternalIP
    choices: [InternalIP, ExternalIP, Hostname]
  label_groups:
    description:
      - Label keys for which to add each Node to a group C(label_<key>_<value>) (C(label_<key>) when the
        value is empty), every character other than letters, digits and C(_) replaced by C(_).
      - For example C(topology.kubernetes.io/zone=zone-a) gives C(label_topology_kubernetes_io_zone_zone_a).
      - Nodes without the label are in no such group. For groups from every label use O(keyed_groups) with
        C(k8s_node_labels) as the C(key).
    type: list
    elements: str
    default: []
notes:
  - Kubelet exits when its memory manager refuses the checkpoint, before it reports the reason to the API
    server, so on a real cluster the C(Ready) condition of such a Node usually says
    C(Kubelet stopped posting node status.) and C(memory_manager_error) stays empty unless a node agent
    (for example node-problem-detector with a journal rule) publishes kubelet's error as a condition.
    Target C(notready) and let the C(nodeops.numa_drift.probe) playbook or the role decide per node.
  - The identity used needs C(list) on C(nodes) (cluster scope).
  - When the Nodes cannot be listed (no usable kubeconfig, an API server that cannot be reached or refuses the
    identity), the plugin's message is shown as the error and the run fails (exit status 1) instead of going on with
    no hosts; the plugin turns on Ansible's C(any_unparsed_is_failed) setting of the C([inventory]) section for that
    run, as AWX does for its inventory syncs.
seealso:
  - name: Inventory guide of this collection
    description: Setting up the plugin, its groups and variables (docs/inventory.md).
    link: https://example.invalid/nodeops/numa_drift/blob/main/docs/inventory.md
"""

EXAMPLES = r"""
# notready.k8s_nodes.yml - only the NotReady Nodes, with the kubeconfig of the controller user:
#   ansible-playbook -i notready.k8s_nodes.yml nodeops.numa_drift.remediate
plugin: nodeops.numa_drift.k8s_nodes
readiness: notready

---
# cluster.k8s_nodes.yml - every worker Node, a named context, groups per zone and per label:
plugin: nodeops.numa_drift.k8s_nodes
kubeconfig: ~/.kube/prod.yaml
context: prod-admin
label_selector: node-role.kubernetes.io/worker
label_groups:
  - topology.kubernetes.io/zone
keyed_groups:
  - key: k8s_node_labels['node.kubernetes.io/instance-type'] | default('unknown')
    prefix: type
groups:
  cordoned: k8s_node_unschedulable
compose:
  ansible_user: "'core'"

---
# token.k8s_nodes.yml - host and token from K8S_AUTH_HOST and K8S_AUTH_API_KEY (as an AWX "OpenShift or
# Kubernetes API Bearer Token" credential injects them), cached for ten minutes between runs:
plugin: nodeops.numa_drift.k8s_nodes
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: /var/tmp/k8s_nodes_cache
cache_timeout: 600
"""

import json
import os
import re

from ansible import constants as C
from ansible.errors import AnsibleParserError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s_setup import kubeconfig_failure

try:
    import kubernetes.client
    import kubernetes.config
    import urllib3
except ImportError as exc:
    KUBERNETES_IMPORT_ERROR = exc
    HAS_KUBERNETES = False
else:
    KUBERNETES_IMPORT_ERROR = None
    HAS_KUBERNETES = True

READY_GROUP = "ready"
NOTREADY_GROUP = "notready"
MEMORY_MANAGER_GROUP = "memory_manager_error"
LIST_PAGE_SIZE = 500

# Kubelet's memory manager identifies itself as "[memorymanager]" in its errors, "memory manager" in
# "start memory manager error", and names its checkpoint file memory_manager_state.
_MEMORY_MANAGER_RE = re.compile(r"memory[ _-]?manager", re.IGNORECASE)
_UNSAFE_GROUP_CHARS_RE = re.compile(r"[^A-Za-z0-9_]")


# Pure functions over Node objects as the API server returns them (JSON, camelCase keys).


def node_conditions(node):
    """The Node's status conditions (a list of dicts)."""
    return (node.get("status") or {}).get("conditions") or []


def ready_condition(node):
    """The Node's condition of type Ready, or None."""
    for condition in node_conditions(node):
        if condition.get("type") == "Ready":
            return condition
    return None


def is_ready(node):
    """True when the Ready condition's status is the string "True" (False, Unknown and absent are not)."""
    condition = ready_condition(node)
    return condition is not None and condition.get("status") == "True"


def ready_message(node):
    """The Ready condition's message ("" when there is none)."""
    condition = ready_condition(node)
    return (condition or {}).get("message") or ""


def names_memory_manager(text):
    """True when a condition message names kubelet's memory manager."""
    return bool(text) and _MEMORY_MANAGER_RE.search(text) is not None


def has_memory_manager_error(node):
    """True when the Ready condition's message, or any condition's message, names the memory manager."""
    return any(names_memory_manager(condition.get("message")) for condition in node_conditions(node))


def node_address(addresses, address_type):
    """The first address of the given type in a Node's status.addresses, or None."""
    for address in addresses or []:
        if address.get("type") == address_type and address.get("address"):
            return address["address"]
    return None


def summarize_node(node):
    """The parts of a Node the inventory uses: small, JSON-friendly, what the cache stores."""
    metadata = node.get("metadata") or {}
    return {
        "name": metadata.get("name"),
        "labels": dict(metadata.get("labels") or {}),
        "addresses": [
            {"type": address.get("type"), "address": address.get("address")}
            for address in (node.get("status") or {}).get("addresses") or []
        ],
        "ready": is_ready(node),
        "ready_message": ready_message(node),
        "memory_manager_error": has_memory_manager_error(node),
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
    }


def safe_group_name(text):
    """A group name made only of letters, digits and underscores."""
    return _UNSAFE_GROUP_CHARS_RE.sub("_", text)


def label_group_names(labels, keys):
    """Group names label_<key>_<value> (label_<key> for an empty value) for the chosen label keys."""
    names = []
    for key in keys or []:
        if key not in labels:
            continue
        value = labels[key]
        raw = "label_%s_%s" % (key, value) if value else "label_%s" % key
        names.append(safe_group_name(raw))
    return names


def readiness_groups(summary):
    """The readiness groups of a summarized Node."""
    groups = [READY_GROUP if summary["ready"] else NOTREADY_GROUP]
    if summary["memory_manager_error"]:
        groups.append(MEMORY_MANAGER_GROUP)
    return groups


def host_groups(summary, label_keys):
    """Every group this plugin itself puts a summarized Node in."""
    return readiness_groups(summary) + label_group_names(summary["labels"], label_keys)


def host_variables(summary, address_type):
    """The host variables of a summarized Node (ansible_host only when the address exists)."""
    hostvars = {
        "remediate_node_name": summary["name"],
        "k8s_node_ready": summary["ready"],
        "k8s_node_labels": summary["labels"],
        "k8s_node_condition_message": summary["ready_message"],
        "k8s_node_unschedulable": summary["unschedulable"],
    }
    address = node_address(summary["addresses"], address_type)
    if address is not None:
        hostvars["ansible_host"] = address
    return hostvars


def selected(summary, readiness):
    """Whether a summarized Node becomes a host under the readiness option."""
    if readiness == "ready":
        return summary["ready"]
    if readiness == "notready":
        return not summary["ready"]
    return True


def summarize_node_list(pages):
    """Summaries of every named Node in the items of NodeList pages, sorted by name."""
    summaries = [summarize_node(node) for page in pages for node in page.get("items") or []]
    return sorted((summary for summary in summaries if summary["name"]), key=lambda summary: summary["name"])


def status_message(body):
    """The message of a Kubernetes Status object in an error body, or the start of the body."""
    if not body:
        return ""
    try:
        status = json.loads(body)
    except ValueError:
        return to_native(body).strip()[:200]
    if isinstance(status, dict) and status.get("message"):
        return to_native(status["message"])
    return to_native(body).strip()[:200]


def api_error_message(url, status, reason, body):
    """A readable sentence for an HTTP error answer of the API server at url."""
    detail = status_message(body)
    suffix = ": %s" % detail if detail else ""
    if status == 401:
        return ("the Kubernetes API at %s rejected the credentials (401 Unauthorized%s); check api_key, "
                "the kubeconfig user or K8S_AUTH_API_KEY" % (url, suffix))
    if status == 403:
        return ("the Kubernetes API at %s refused to list nodes (403 Forbidden%s); the identity needs "
                "'list' on 'nodes' at cluster scope" % (url, suffix))
    if not status:
        # The client reports TLS failures as status 0.
        return ("cannot talk to the Kubernetes API at %s: %s; set ca_cert (K8S_AUTH_SSL_CA_CERT) or "
                "validate_certs" % (url, to_native(reason).replace("\n", ": ")))
    return "the Kubernetes API at %s answered %s %s%s" % (url, status, reason or "", suffix)


def connection_error_reason(exc):
    """The innermost reason of a connection failure (urllib3 wraps it in MaxRetryError)."""
    reason = getattr(exc, "reason", None)
    return to_native(reason if isinstance(reason, Exception) else exc)


def strip_bearer(token):
    """A token without a leading 'Bearer ' (AWX and users paste either form)."""
    token = token.strip()
    if token.lower().startswith("bearer "):
        return token[len("bearer "):].strip()
    return token


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """Hosts from the Nodes of a Kubernetes cluster."""

    NAME = "nodeops.numa_drift.k8s_nodes"
    _source = None

    def verify_file(self, path):
        if not super().verify_file(path):
            return False
        if path.endswith(("k8s_nodes.yml", "k8s_nodes.yaml")):
            return True
        self.display.vvv("Skipping %s: the name of a %s source must end with k8s_nodes.yml or k8s_nodes.yaml"
                         % (path, self.NAME))
        return False

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._source = path
        self._read_config_data(path)

        cache_key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        update_cache = self.get_option("cache") and not cache

        summaries = None
        if use_cache:
            try:
                summaries = self._cache[cache_key]
            except KeyError:
                update_cache = True
        if summaries is None:
            try:
                summaries = self._fetch_summaries()
            except AnsibleParserError as error:
                self._fail_the_run(error)
        if update_cache:
            self._cache[cache_key] = summaries

        self._populate(summaries)

    def _fail_the_run(self, error):
        """Stop the run: a source that cannot list the Nodes is an error, not an empty inventory.

        Ansible turns a failed inventory source into warnings and goes on with no hosts ("no hosts matched", exit 0)
        unless ``[inventory] any_unparsed_is_failed`` is set. The targets of a remediation are the Nodes this source
        lists, so none listed must not read as none to repair: the setting is turned on for this run, as AWX does for
        every inventory sync, and the plugin's own message is the error shown (once; the warning that Ansible's
        inventory manager adds points to it)."""
        C.INVENTORY_ANY_UNPARSED_IS_FAILED = True
        self.display.error(to_native(error))
        raise AnsibleParserError("%s could not list the Nodes (the error above); the run stops" % self.NAME) from None

    def _fetch_summaries(self):
        if not HAS_KUBERNETES:
            raise AnsibleParserError(
                "%s needs the 'kubernetes' Python package on the controller (%s); install it into the Python "
                "that runs Ansible with 'python -m pip install kubernetes', or use an execution environment "
                "built from this collection's execution-environment/ definition"
                % (self.NAME, to_native(KUBERNETES_IMPORT_ERROR)))
        configuration = self._client_configuration()
        return summarize_node_list(self._list_node_pages(configuration))

    def _client_configuration(self):
        """A kubernetes.client.Configuration following kubernetes.core's rules for its options."""
        # Empty values (an AWX credential field left blank, an empty K8S_AUTH_* variable) mean unset.
        kubeconfig = self.get_option("kubeconfig") or None
        context = self.get_option("context") or None
        host = self.get_option("host") or None
        api_key = self.get_option("api_key") or None

        configuration = kubernetes.client.Configuration()
        if not (host and api_key):
            self._load_kubeconfig(configuration, kubeconfig, context)
        if host:
            configuration.host = host.rstrip("/")
        if api_key:
            # Replaces the kubeconfig's token and its refresh hook (exec and OIDC users).
            configuration.api_key = {"authorization": "Bearer %s" % strip_bearer(api_key)}
            configuration.api_key_prefix = {}
            configuration.refresh_api_key_hook = None
        if self.get_option("validate_certs") is not None:
            configuration.verify_ssl = self.get_option("validate_certs")
        if self.get_option("ca_cert"):
            configuration.ssl_ca_cert = self.get_option("ca_cert")
        return configuration

    def _load_kubeconfig(self, configuration, kubeconfig, context):
        if not (kubeconfig or context):
            try:
                kubernetes.config.load_incluster_config(client_configuration=configuration)
                return
            except kubernetes.config.ConfigException:
                pass
        try:
            kubernetes.config.load_kube_config(config_file=kubeconfig, context=context,
                                               client_configuration=configuration)
        except (kubernetes.config.ConfigException, OSError, ValueError, TypeError) as exc:
            source = os.path.basename(self._source or "") or "the inventory source"
            raise AnsibleParserError("%s: %s; or set host and api_key (each also as K8S_AUTH_KUBECONFIG, K8S_AUTH_CONTEXT, K8S_AUTH_HOST, "
                                     "K8S_AUTH_API_KEY)" % (self.NAME, kubeconfig_failure(kubeconfig, context, to_native(exc),
                                                                                          settings=("kubeconfig in %s" % source, "context")))) from None

    def _list_node_pages(self, configuration):
        """Every page of GET /api/v1/nodes, as parsed JSON."""
        url = configuration.host
        api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(configuration))
        pages = []
        token = None
        while True:
            kwargs = {
                "limit": LIST_PAGE_SIZE,
                "_preload_content": False,
                "_request_timeout": self.get_option("request_timeout"),
            }
            if self.get_option("label_selector"):
                kwargs["label_selector"] = self.get_option("label_selector")
            if token:
                kwargs["_continue"] = token
            try:
                response = api.list_node(**kwargs)
                page = json.loads(response.data)
            # "from None": the message says it all; the client's exceptions add headers and repeats.
            except kubernetes.client.exceptions.ApiException as exc:
                raise AnsibleParserError("%s: %s" % (
                    self.NAME, api_error_message(url, exc.status, exc.reason, exc.body))) from None
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise AnsibleParserError("%s: cannot reach the Kubernetes API at %s: %s" % (
                    self.NAME, url, connection_error_reason(exc))) from None
            except ValueError as exc:
                raise AnsibleParserError("%s: the Kubernetes API at %s did not answer a NodeList: %s" % (
                    self.NAME, url, to_native(exc))) from None
            pages.append(page)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return pages

    def _populate(self, summaries):
        for group in (READY_GROUP, NOTREADY_GROUP, MEMORY_MANAGER_GROUP):
            self.inventory.add_group(group)

        readiness = self.get_option("readiness")
        address_type = self.get_option("address_type")
        label_keys = self.get_option("label_groups")
        strict = self.get_option("strict")

        for summary in summaries:
            if not selected(summary, readiness):
                continue
            name = summary["name"]
            self.inventory.add_host(name)
            hostvars = host_variables(summary, address_type)
            if "ansible_host" not in hostvars:
                self.display.warning("%s: Node %s has no %s address; ansible_host is not set"
                                     % (self.NAME, name, address_type))
            for key, value in hostvars.items():
                self.inventory.set_variable(name, key, value)
            for group in host_groups(summary, label_keys):
                self.inventory.add_group(group)
                self.inventory.add_child(group, name)

            self._set_composite_vars(self.get_option("compose"), hostvars, name, strict=strict)
            self._add_host_to_composed_groups(self.get_option("groups"), hostvars, name, strict=strict)
            self._add_host_to_keyed_groups(self.get_option("keyed_groups"), hostvars, name, strict=strict)
