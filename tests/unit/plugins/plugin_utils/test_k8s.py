# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/plugin_utils/_k8s.py and _k8s_setup.py: a client that cannot be set up names the kubeconfig file and the role's
variables that choose it (through kubernetes.core's own client factory, as the action plugins use it)."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import Api, ApiFailure
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s_setup import kubeconfig_failure, kubeconfig_in_use

ADVICE = ("; set remediate_kubeconfig to a readable kubeconfig file of the cluster and remediate_kube_context to one of its contexts "
          "(unset: its current context)")


@pytest.fixture(autouse=True)
def no_kube_environment(monkeypatch, tmp_path):
    for name in ("KUBERNETES_SERVICE_HOST", "KUBECONFIG", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def failure(kubeconfig=None, context=None):
    with pytest.raises(ApiFailure) as raised:
        Api(kubeconfig, context)
    return str(raised.value)


def kubeconfig_file(tmp_path, server="https://127.0.0.1:1"):
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "one",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": "one", "context": {"cluster": "c", "user": "u"}}],
    }))
    return str(path)


def test_a_missing_kubeconfig_names_the_path_and_the_variable(tmp_path):
    # kubernetes.core said only "Invalid kube-config file. No configuration found."
    missing = str(tmp_path / "nope" / "config")
    assert failure(missing) == "the kubeconfig %s (remediate_kubeconfig) does not exist" % missing + ADVICE


def test_no_kubeconfig_set_and_none_at_the_default_place_names_both(tmp_path):
    assert failure() == ("the kubeconfig %s/home/.kube/config (the default; remediate_kubeconfig is not set) does not exist" % tmp_path
                         + ADVICE)


def test_a_kubeconfig_that_cannot_be_read_names_the_path_and_the_variable(tmp_path):
    assert failure(str(tmp_path)) == "the kubeconfig %s (remediate_kubeconfig) cannot be read (Is a directory)" % tmp_path + ADVICE


def test_an_empty_kubeconfig_names_the_path_the_variable_and_the_clients_reason(tmp_path):
    empty = tmp_path / "empty"
    empty.write_text("")
    assert failure(str(empty)) == ("cannot use the kubeconfig %s (remediate_kubeconfig): Invalid kube-config. %s file is empty" % (empty, empty)
                                   + ADVICE)


def test_an_unknown_context_names_the_file_the_context_and_both_variables(tmp_path):
    path = kubeconfig_file(tmp_path)
    assert failure(path, "two") == (
        "cannot use the kubeconfig %s (remediate_kubeconfig) with the context 'two' (remediate_kube_context): Invalid kube-config file. "
        "Expected object with name two in %s/contexts list" % (path, path) + ADVICE)


def test_a_server_that_cannot_be_reached_is_not_called_a_bad_kubeconfig(tmp_path):
    path = kubeconfig_file(tmp_path)
    said = failure(path)
    assert said.startswith("cannot reach the Kubernetes API with the kubeconfig %s (remediate_kubeconfig): " % path)
    assert "Connection refused" in said and "set remediate_kubeconfig" not in said


def test_the_file_in_use_follows_the_clients_order(tmp_path):
    assert kubeconfig_in_use("~/k", "remediate_kubeconfig", {}) == ("%s/home/k" % tmp_path, "remediate_kubeconfig")
    assert kubeconfig_in_use(None, "remediate_kubeconfig", {"K8S_AUTH_KUBECONFIG": "/a", "KUBECONFIG": "/b"}) == (
        "/a", "K8S_AUTH_KUBECONFIG; remediate_kubeconfig is not set")
    assert kubeconfig_in_use(None, "remediate_kubeconfig", {"KUBECONFIG": "/b"}) == ("/b", "$KUBECONFIG; remediate_kubeconfig is not set")


def test_host_and_token_from_the_environment_are_named_instead_of_a_kubeconfig():
    environ = {"K8S_AUTH_HOST": "https://10.0.0.1:6443", "K8S_AUTH_API_KEY": "t"}
    assert kubeconfig_failure(None, None, "Could not create API client: boom", environ=environ) == (
        "cannot use the API server https://10.0.0.1:6443 (K8S_AUTH_HOST and K8S_AUTH_API_KEY; remediate_kubeconfig is not set): boom")
