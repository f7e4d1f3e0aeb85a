# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_common/credentials.py: which files are never read, which values are redacted, and
that redaction leaves every setting the probe reads as it was."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.credentials import (
    PLACEHOLDER,
    is_credential_name,
    redact,
    withheld_content,
    withheld_name,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load_mapping
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import parse_env_file, parse_unit_lines

SECRET = "K10f00d::server:c0ffee"


@pytest.mark.parametrize("text, expected", [
    ("K3S_TOKEN=%s\nK3S_URL=https://10.0.0.1:6443\n" % SECRET, "K3S_TOKEN=REDACTED\nK3S_URL=https://10.0.0.1:6443\n"),
    ('RKE2_TOKEN="%s"\nexport K3S_AGENT_TOKEN=%s # set by the installer\n' % (SECRET, SECRET),
     'RKE2_TOKEN="REDACTED"\nexport K3S_AGENT_TOKEN=REDACTED # set by the installer\n'),
    ("token: %s\nagent-token: \"%s\"\nkubelet-arg:\n  - config=/etc/k.yaml\ndata-dir: /srv/k3s\n" % (SECRET, SECRET),
     "token: REDACTED\nagent-token: \"REDACTED\"\nkubelet-arg:\n  - config=/etc/k.yaml\ndata-dir: /srv/k3s\n"),
    ("datastore-endpoint: postgres://k3s:%s@db:5432/k3s\n" % SECRET, "datastore-endpoint: REDACTED\n"),
    ("ExecStart=/usr/local/bin/k3s agent --token=%s --server https://x:6443 --token %s --kubelet-arg=config=/x\n" % (SECRET, SECRET),
     "ExecStart=/usr/local/bin/k3s agent --token=REDACTED --server https://x:6443 --token REDACTED --kubelet-arg=config=/x\n"),
    ('Environment="K3S_TOKEN=%s" "K3S_NODE_NAME=worker-1"\n' % SECRET, 'Environment="K3S_TOKEN=REDACTED" "K3S_NODE_NAME=worker-1"\n'),
    ('{"kind":"KubeletConfiguration","staticPodURLHeader":{"Authorization":["Bearer %s"]},"token":"%s"}\n' % (SECRET, SECRET),
     '{"kind":"KubeletConfiguration","staticPodURLHeader":{"Authorization":["Bearer REDACTED"]},"token":"REDACTED"}\n'),
    ("token: |\n  %s\n  second line\nnext: 1\n" % SECRET, "token: |\n  REDACTED\n  REDACTED\nnext: 1\n"),
    ("etcd-s3-secret-key:\n  nested: %s\n  - %s\nok: 2\n" % (SECRET, SECRET), "etcd-s3-secret-key:\n  nested: REDACTED\n  - REDACTED\nok: 2\n"),
    ('"token": [\n   "%s",\n   "%s"\n],\n"ok": 1\n' % (SECRET, SECRET), '"token": [\n   "REDACTED",\n   "REDACTED"\n],\n"ok": 1\n'),
    ('KUBELET_EXTRA_ARGS="--node-labels=a=b --bootstrap-token=%s"\n' % SECRET, 'KUBELET_EXTRA_ARGS="--node-labels=a=b --bootstrap-token=REDACTED"\n'),
    ("HTTPS_PROXY=http://proxy-user:%s@proxy:3128\n" % SECRET, "HTTPS_PROXY=http://proxy-user:REDACTED@proxy:3128\n"),
    ('K3S_TOKEN="first\nsecond %s"\nNEXT=1\n' % SECRET, 'K3S_TOKEN="REDACTED\n"\nNEXT=1\n'),
    ('K3S_TOKEN="first\nsecond\nthird %s"\nNEXT=1\n' % SECRET, 'K3S_TOKEN="REDACTED\nREDACTED\n"\nNEXT=1\n'),
    ("vpn-auth: {name: tailscale, joinKey: %s}\n" % SECRET, "vpn-auth: {REDACTED: REDACTED, REDACTED: REDACTED}\n"),
])
def test_credential_values_are_redacted_and_the_rest_kept(text, expected):
    assert redact(text) == expected
    assert SECRET not in redact(text) and redact(text).count("\n") == text.count("\n")


def test_a_file_without_credentials_is_kept_byte_for_byte():
    unit = ('[Service]\nEnvironment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"\n'
            "EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nExecStart=/usr/bin/kubelet $KUBELET_CONFIG_ARGS\n")
    config = ("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmemoryManagerPolicy: Static\n"
              "reservedMemory:\n- numaNode: 0\n  limits: {memory: 1Gi}\nauthentication:\n  webhook: {enabled: true}\n")
    assert redact(unit) == unit and redact(config) == config


@pytest.mark.parametrize("name, credential", [
    ("K3S_TOKEN", True), ("--agent-token", True), ("etcd-s3-secret-key", True), ("AWS_ACCESS_KEY_ID", True),
    ("datastore-endpoint", True), ("vpn-auth", True), ("tlsPrivateKeyFile", True), ("secrets-encryption", True),
    ("KUBELET_KUBEADM_ARGS", False), ("NODEADM_KUBELET_ARGS", False), ("kubelet-arg", False), ("data-dir", False),
    ("config", False), ("authentication", False), ("authorization", False), ("keepTerminatedPodVolumes", False),
    ("memoryManagerPolicy", False), ("reservedMemory", False), ("systemReserved", False), ("featureGates", False),
])
def test_a_credential_is_named_so(name, credential):
    assert is_credential_name(name) is credential


@pytest.mark.parametrize("path, withheld", [
    ("/var/lib/rancher/k3s/agent/client-kubelet.key", True), ("/var/lib/rancher/k3s/agent/serving-kubelet.crt", True),
    ("/var/lib/rancher/rke2/agent/kubelet.kubeconfig", True), ("/var/lib/kubelet/kubeconfig", True),
    ("/var/lib/rancher/k3s/server/token", True), ("/var/lib/rancher/k3s/server/node-token", True),
    ("/etc/kubernetes/pki/ca.crt", True), ("/etc/kubernetes/pki/etcd/peer.key", True),
    ("/etc/rancher/k3s/encryption-config.json", True), ("/root/.ssh/id_ed25519", True),
    ("/etc/rancher/k3s/config.yaml", False), ("/etc/systemd/system/k3s.service.env", False), ("/var/lib/kubelet/config.yaml", False),
    ("/etc/kubernetes/kubelet/kubelet-config.json", False), ("/etc/kubernetes/kubelet.conf", False), ("/etc/default/kubelet", False),
])
def test_key_certificate_kubeconfig_and_token_files_are_never_read_by_name(path, withheld):
    assert bool(withheld_name(path)) is withheld


@pytest.mark.parametrize("text, why", [
    ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n", "it holds a PEM block (a key or certificate)"),
    ("apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n", "it is a kubeconfig"),
    ("users:\n- name: kubelet\n  user:\n    client-key-data: c2VjcmV0\n", "it is a kubeconfig"),
    ('{"kind": "EncryptionConfiguration", "resources": []}\n', "it is a EncryptionConfiguration"),
    ("apiVersion: v1\nkind: Secret\ndata: {}\n", "it is a Secret"),
    ("kind: KubeletConfiguration\nmemoryManagerPolicy: Static\n", None),
])
def test_a_kubeconfig_or_key_under_any_name_is_never_read_by_content(text, why):
    assert withheld_content(text) == why


def test_redaction_leaves_what_the_probe_reads_of_a_rancher_config_as_it_was():
    config = ("token: %s\nserver: https://10.0.0.1:6443\ndata-dir: /srv/k3s\nkubelet-arg:\n  - config=/etc/k.yaml\n"
              "  - reserved-memory=0:memory=1Gi\nagent-token: '%s'\n" % (SECRET, SECRET))
    before, after = load_mapping(config)[0], load_mapping(redact(config))[0]
    assert {key: before[key] for key in ("server", "data-dir", "kubelet-arg")} == {key: after[key] for key in ("server", "data-dir", "kubelet-arg")}
    assert after["token"] == after["agent-token"] == PLACEHOLDER


def test_redaction_leaves_an_env_file_and_a_unit_parseable_with_the_same_keys():
    env = 'K3S_TOKEN="%s"\nKUBELET_EXTRA_ARGS="--v=2 --node-labels=a=b"\n' % SECRET
    assert parse_env_file(redact(env)) == ({"K3S_TOKEN": PLACEHOLDER, "KUBELET_EXTRA_ARGS": "--v=2 --node-labels=a=b"}, [])
    unit = "[Service]\nExecStart=/usr/local/bin/k3s agent \\\n  --token %s \\\n  --kubelet-arg config=/etc/k.yaml\n" % SECRET
    assert parse_unit_lines(redact(unit), "k3s.service") == parse_unit_lines(unit.replace(SECRET, PLACEHOLDER), "k3s.service")


_WORDS = strategies.text(alphabet=strategies.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(strategies.lists(_WORDS, max_size=12), strategies.sampled_from(["K3S_TOKEN=", "token: ", "--token=", "  agent-token: ",
                                                                      '"token": ', "export RKE2_TOKEN=", "--token "]))
def test_a_planted_secret_never_survives_and_the_lines_stay(lines, form):
    secret = "s3cr3tV4lu3"
    text = "\n".join(lines[: len(lines) // 2] + [form + secret] + lines[len(lines) // 2:])
    redacted = redact(text)
    assert secret not in redacted.split("\n")[len(lines) // 2]
    assert redacted.count("\n") == text.count("\n")


@pytest.mark.parametrize("text", [
    # k3s' and RKE2's CIS profiles, EKS and kubeadm: booleans of flags whose names hold a credential word. Redacted,
    # kubelet's command line would not parse (the kubelet judge saw 'invalid argument "REDACTED" for "--anonymous-auth"').
    'kubelet-arg:\n  - "anonymous-auth=false"\n  - "authentication-token-webhook=true"\n',
    "KUBELET_EXTRA_ARGS=--anonymous-auth=false --authentication-token-webhook=True\n",
    "ExecStart=/usr/bin/kubelet --anonymous-auth false --authentication-token-webhook=1\n",
    '{"auth": "FALSE", "token": "0"}\n',
])
def test_a_boolean_is_never_a_credential_and_is_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize("value", ["yes", "off", "truex", "False1", "0x1", "10", "t0ken"])
def test_anything_but_a_boolean_literal_under_a_credential_name_is_redacted(value):
    assert redact("--token=%s\nK3S_TOKEN=%s\ntoken: %s\n" % (value, value, value)) == "--token=REDACTED\nK3S_TOKEN=REDACTED\ntoken: REDACTED\n"
