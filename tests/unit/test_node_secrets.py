# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No secret leaves a node: every byte the node reader sends, per distribution, with secrets planted where real nodes
keep them.

Each distribution layout (tests/support/distributions.py) gets the keys, certificates, kubeconfigs, join tokens and
encryption configuration its kind of node holds, in their real places (k3s and RKE2 ``data-dir`` agent and server
files, ``/etc/kubernetes`` and its ``pki``, kubelet's own ``pki`` and kubeconfig, MicroK8s' credentials, k0s' token
file), credentials inside the files the probe must read (``token:`` in ``config.yaml``, ``K3S_TOKEN`` in the
service's environment file, ``--token`` on the command line, a datastore password), and the paths that used to leak
(a custom ``data-dir:``, a server's ``--encryption-provider-config=``). The reader runs both ways it runs on a node:
the program on a real interpreter's standard input (its standard output is what crosses) and the ``__node_read``
module's function (its answer as JSON). Not one planted secret may be among those bytes, and the verdict is still the
distribution's. What crosses is listed in docs/safety.md from this test (the last test fails when it is stale).
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from typing import Any, Dict, List, Set

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader import read_plan as node_reader
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import read_plan
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot
from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, drifted_node
from ansible_collections.nodeops.numa_drift.tests.support.node_answer import answered, facts_of
from ansible_collections.nodeops.numa_drift.tests.support.programs import PROGRAMS, install_program, install_release, said, version_script

SAFETY_DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "safety.md")
MARK = "SECRET-c4f1"


def secret(name: str) -> str:
    return "%s-%s-9e2d" % (MARK, name)


def pem(name: str) -> str:
    return "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n" % base64.b64encode(secret(name).encode()).decode()


def kubeconfig(name: str) -> str:
    return ("apiVersion: v1\nkind: Config\nclusters:\n- cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: %s}\n"
            "  name: c\nusers:\n- name: u\n  user: {client-key-data: %s, token: %s}\n"
            % (base64.b64encode(secret(name + "-ca").encode()).decode(), base64.b64encode(secret(name + "-key").encode()).decode(),
               secret(name + "-token")))


# Where every kind of node keeps its secrets (planted on every layout: a probe never knows which it is on).
COMMON = {
    "/etc/kubernetes/admin.conf": kubeconfig("admin"),
    "/etc/kubernetes/kubelet.conf": kubeconfig("kubeadm-kubelet-conf"),
    "/etc/kubernetes/bootstrap-kubelet.conf": kubeconfig("bootstrap"),
    "/etc/kubernetes/pki/ca.key": pem("ca-key"),
    "/etc/kubernetes/pki/sa.key": pem("sa-key"),
    "/etc/kubernetes/pki/etcd/peer.key": pem("etcd-peer"),
    "/var/lib/kubelet/kubeconfig": kubeconfig("kubelet-kubeconfig"),
    "/var/lib/kubelet/pki/kubelet-client-current.pem": pem("kubelet-client"),
    "/var/lib/kubelet/pki/kubelet.key": pem("kubelet-serving"),
    "/etc/kubernetes/encryption-config.yaml": "kind: EncryptionConfiguration\nresources:\n- providers:\n  - aescbc:\n"
                                              "      keys:\n      - {name: k1, secret: %s}\n" % secret("etcd-encryption"),
}
RANCHER_DATA = "/srv/rancher-data"  # a custom data-dir: the path that used to be read whole


def rancher(flavour: str) -> Dict[str, str]:
    data = "/var/lib/rancher/%s" % flavour
    files = {}
    for base in (data, RANCHER_DATA):
        files.update({
            base + "/agent/client-kubelet.key": pem(flavour + "-client-kubelet"),
            base + "/agent/serving-kubelet.key": pem(flavour + "-serving-kubelet"),
            base + "/agent/client-kubelet.crt": pem(flavour + "-client-kubelet-crt"),
            base + "/agent/kubelet.kubeconfig": kubeconfig(flavour + "-kubelet"),
            base + "/agent/k3scontroller.kubeconfig": kubeconfig(flavour + "-controller"),
            base + "/server/token": "K10%s::server:%s\n" % (secret(flavour + "-server-token"), secret(flavour + "-server-password")),
            base + "/server/node-token": secret(flavour + "-node-token") + "\n",
            base + "/server/agent-token": secret(flavour + "-agent-token-file") + "\n",
            base + "/server/cred/passwd": "%s,node,node\n" % secret(flavour + "-passwd"),
            base + "/server/cred/encryption-config.json": '{"kind":"EncryptionConfiguration","resources":[{"providers":[{"aescbc":'
                                                          '{"keys":[{"name":"k","secret":"%s"}]}}]}]}\n' % secret(flavour + "-encryption"),
            base + "/server/tls/server-ca.key": pem(flavour + "-server-ca"),
        })
    files.update({
        "/etc/rancher/%s/%s.yaml" % (flavour, flavour): kubeconfig(flavour + "-admin"),
        "/etc/rancher/node/password": secret(flavour + "-node-password") + "\n",
    })
    return files


PLANTED = {
    "k3s": rancher("k3s"),
    "rke2": rancher("rke2"),
    "k0s": {"/etc/k0s/token": secret("k0s-join-token") + "\n", "/var/lib/k0s/kubelet.conf": kubeconfig("k0s-kubelet"),
            "/var/lib/k0s/pki/ca.key": pem("k0s-ca"),
            "/etc/k0s/k0s.yaml": "apiVersion: k0s.k0sproject.io/v1beta1\nkind: ClusterConfig\nspec:\n  storage:\n    type: kine\n"
                                 "    kine: {dataSource: 'mysql://k0s:%s@tcp(db:3306)/k0s'}\n" % secret("k0s-kine-password")},
    "microk8s": {"/var/snap/microk8s/current/credentials/kubelet.config": kubeconfig("microk8s-kubelet"),
                 "/var/snap/microk8s/current/credentials/known_tokens.csv": "%s,admin,admin,system:masters\n" % secret("microk8s-token"),
                 "/var/snap/microk8s/current/certs/ca.key": pem("microk8s-ca")},
    "openshift": {"/etc/kubernetes/kubeconfig": kubeconfig("openshift-bootstrap"),
                  "/etc/kubernetes/static-pod-resources/kube-apiserver-certs/secrets/service-network-serving-certkey/tls.key": pem("openshift")},
}


def inline_secrets(name: str, files: Dict[str, str]) -> Dict[str, str]:
    """Credentials inside the files the probe must read, as installers and operators put them there."""
    files = dict(files)
    if name in ("k3s", "rke2"):
        config = "/etc/rancher/%s/config.yaml" % name
        files[config] = files.get(config, "") + (
            "token: %s\nagent-token: \"%s\"\ndatastore-endpoint: postgres://k3s:%s@db:5432/k3s\ndata-dir: %s\n"
            % (secret(name + "-config-token"), secret(name + "-config-agent-token"), secret(name + "-datastore"), RANCHER_DATA))
        units = [path for path in files if path.endswith(".service")]
        for unit in units:
            files[unit] = files[unit].rstrip("\n") + " --token %s\nEnvironmentFile=-%s.env\n" % (secret(name + "-flag-token"), unit)
            files[unit + ".env"] = "%s_TOKEN=%s\n%s_URL=https://10.0.0.1:6443\n" % (name.upper(), secret(name + "-env-token"), name.upper())
            files[unit.replace(".service", "-server.service").replace("agent-server", "server")] = (
                "[Service]\nExecStart=/usr/local/bin/%s server --kube-apiserver-arg=encryption-provider-config=%s "
                "--encryption-provider-config=%s\n" % (name, "/etc/kubernetes/encryption-config.yaml", "/etc/kubernetes/encryption-config.yaml"))
        managed = RANCHER_DATA + "/agent/etc/kubelet.conf.d/"
        for path in [path for path in files if "/agent/etc/kubelet.conf.d/" in path]:
            files[managed + os.path.basename(path)] = files.pop(path)
    if name == "k0s":
        unit = "/etc/systemd/system/k0sworker.service"
        files[unit] = files[unit].replace("--token-file=/etc/k0s/token", "--token-file=/etc/k0s/token --config=/etc/k0s/k0s.yaml")
    files.setdefault("/etc/default/kubelet", "HTTPS_PROXY=http://proxy:%s@proxy.internal:3128\nAWS_SECRET_ACCESS_KEY=%s\n"
                     % (secret("proxy-password"), secret("aws-secret")))
    return files


def layout_tree(tmp_path, name):
    files, _distribution, _service, root_dir = LAYOUTS[name]
    planted = dict(COMMON, **PLANTED.get(name, {}))
    root = drifted_node(str(tmp_path / "node"), dict(planted, **inline_secrets(name, files)), kubelet_root_dir=root_dir)
    # The program that runs kubelet, asked its version: it prints a planted secret on its second line (only the first
    # line crosses). MicroK8s says its release in its snap.yaml.
    install_release(root, name, "v1.35.4")
    if name in PROGRAMS:
        program = PROGRAMS[name]
        install_program(root, program, version_script(said(program, "v1.35.4") + "%s-program-output-9e2d\n" % MARK))
    return root


def strings_of(value: Any) -> List[str]:
    """Every string in an answer, base64 ones decoded as well."""
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key] + strings_of(item)]
    if isinstance(value, list):
        return [text for item in value for text in strings_of(item)]
    if isinstance(value, str):
        try:
            return [value, base64.b64decode(value, validate=True).decode("utf-8", "replace")]
        except ValueError:
            return [value]
    return []


def what_crosses(root: str) -> Dict[str, Any]:
    """The node reader's answer both ways: ``{"program": stdout bytes, "module": the answer as JSON text}``."""
    rules, follows = read_plan({})
    program = _snapshot.reader_program(_snapshot.reader_arguments(root, rules, follows))
    ran = subprocess.run([sys.executable, "-I", "-"], input=program, capture_output=True, check=True)
    return {"program": ran.stdout, "module": json.dumps({"changed": False, "entries": node_reader(root, rules, follows)}).encode()}


def assert_no_secret(sent: bytes, how: str) -> Set[str]:
    found = set(re.findall(r"%s-[a-z0-9-]+-9e2d" % MARK, sent.decode("utf-8", "replace")))
    for text in strings_of(json.loads(sent)):
        found |= set(re.findall(r"%s-[a-z0-9-]+-9e2d" % MARK, text))
    assert not found, "%s sent planted secrets: %s" % (how, sorted(found))
    return found


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_no_planted_secret_crosses_and_the_verdict_is_kept(tmp_path, name):
    root = layout_tree(tmp_path, name)
    for how, sent in what_crosses(root).items():
        assert_no_secret(sent, how)
    facts, reads = answered(root, facts_of("auto"))
    assert facts["verdict"] == "drift_within_bound", facts["causes"]
    assert facts["kubelet"]["distribution"] == LAYOUTS[name][1] and reads == 1
    assert facts["kubelet"]["release"] == "1.35", facts["kubelet"]["release_source"]


def crossing_files(root: str) -> List[str]:
    """The node paths whose content crosses (text or bytes), as the program sends them."""
    answer = json.loads(what_crosses(root)["program"])["entries"]
    return sorted(key for key, records in answer.items()
                  if any(field in records.get(how, {}) for how in ("text", "raw") for field in ("text", "data", "base64")))


def programs_asked(root: str) -> List[str]:
    """The node paths of the programs asked their version (the first line of their answer crosses)."""
    answer = json.loads(what_crosses(root)["program"])["entries"]
    return sorted(key for key, records in answer.items() if "output" in records.get("version", {}))


def crossing_table(tmp_path) -> str:
    rows = []
    for name in sorted(LAYOUTS):
        root = layout_tree(tmp_path / name, name)
        paths = [path for path in crossing_files(root) if not path.startswith(("/sys/", "/proc/"))]
        asked = programs_asked(root)
        rows.append("| %s | %s | %s |" % (name, ", ".join("`%s`" % path for path in paths), ", ".join("`%s`" % path for path in asked) or "none"))
    return "\n".join(["| layout (tests/support/distributions.py) | files whose content crosses, besides sysfs and procfs "
                      "| programs asked their version (the first line of the answer crosses) |",
                      "|---|---|---|"] + rows)


def test_docs_safety_lists_what_crosses_per_distribution(tmp_path):
    with open(SAFETY_DOC, encoding="utf-8") as handle:
        text = handle.read()
    begin, end = "<!-- what crosses: generated by tests/unit/test_node_secrets.py -->", "<!-- end of what crosses -->"
    assert begin in text and end in text, "docs/safety.md lacks the table of what crosses"
    documented = text.split(begin, 1)[1].split(end, 1)[0].strip()
    table = crossing_table(tmp_path)
    assert documented == table, "docs/safety.md's table of what crosses is stale; the current one:\n" + table
