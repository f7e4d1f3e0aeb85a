# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/wrappers.py: how each distribution's wrapper turns its options into
kubelet's command line (k3s/RKE2 kubelet-arg, k0s --kubelet-extra-args, MicroK8s' bash array), pure."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.wrappers import (
    RANCHER_EVICTION_HARD,
    _k0s_controller_runs_kubelet,
    _option_value,
    _option_values,
    bash_array_words,
    k0s_extra_args,
    kubelet_args_of,
    kubelet_program,
    merge_rancher_config,
    rancher_flag_only_kubelet_args,
    rancher_kubelet_args,
    runs_kubelet,
)

MANAGED = "/var/lib/rancher/k3s/agent/etc/kubelet.conf.d"


def args(*words, origin="unit"):
    return [Arg(word, origin) for word in words]


def values(arguments):
    return [arg.value for arg in arguments]


# --------------------------------------------------------------------------- the kubelet program and its options


@pytest.mark.parametrize("command, program", [
    (("/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml"), "/usr/bin/kubelet"),
    (("/usr/bin/kubenswrapper", "/usr/bin/kubelet", "--root-dir=/var/lib/kubelet"), "/usr/bin/kubelet"),
    (("/usr/local/bin/k0s", "worker", "--kubelet-root-dir", "/var/lib/k0s/kubelet"), "/usr/local/bin/k0s"),
    (("/usr/local/bin/k3s", "agent", "--kubelet-arg=root-dir=/x/kubelet"), "/usr/local/bin/k3s"),
    (("/usr/local/bin/start-kubelet.sh", "--root-dir=/var/lib/kubelet"), "/usr/local/bin/start-kubelet.sh"),
    (("kubelet", "--v=2"), None),
    ((), None),
])
def test_the_program_is_the_commands_own_word_never_an_argument_that_names_kubelet(command, program):
    # As the read plan's exec-program follow reads it: ExecStart's first word, or the one after kubenswrapper.
    assert kubelet_program(args(*command)) == program


def test_kubelet_args_are_the_words_after_the_program_named_kubelet():
    # OpenShift runs "kubenswrapper /usr/bin/kubelet ARGS": kubelet's argv starts after /usr/bin/kubelet.
    assert values(kubelet_args_of(args("/usr/bin/kubenswrapper", "/usr/bin/kubelet", "--v=2", "--config=/c"))) == ["--v=2", "--config=/c"]
    assert values(kubelet_args_of(args("/usr/bin/kubelet"))) == []
    # No word named kubelet: everything after the program.
    assert values(kubelet_args_of(args("/opt/bin/hyperkube-kubelet", "--v=2"))) == ["--v=2"]


def test_runs_kubelet_by_program_base_name():
    assert runs_kubelet(args("/usr/bin/kubenswrapper", "/usr/bin/kubelet"))
    assert runs_kubelet(args("kubelet"))
    assert not runs_kubelet(args("/usr/local/bin/k3s", "agent"))
    assert not runs_kubelet(args("/usr/bin/kubelet-wrapper"))
    assert not runs_kubelet([])


def test_option_value_is_the_last_in_any_spelling():
    words = ["--data-dir=/a", "-d", "/b", "--data-dir", "/c", "--data-dirx=/x"]
    assert _option_value(words, ("--data-dir", "-d")) == "/c"
    assert _option_value(["--config"], ("--config",)) is None  # no word after it: no value
    assert _option_value([], ("--config",)) is None
    assert _option_values(["--kubelet-arg=a=1", "--kubelet-arg", "b=2", "--kubelet-argz=c"], "--kubelet-arg") == ["a=1", "b=2"]


@pytest.mark.parametrize("words, runs", [
    (["controller"], False),
    (["controller", "--enable-worker"], True),
    (["controller", "--enable-worker=true"], True),
    (["controller", "--single"], True),  # --single implies a worker (k0s pkg/config/cli.go)
    (["controller", "--enable-worker=false"], False),
])
def test_k0s_controller_runs_kubelet_only_with_a_worker(words, runs):
    assert _k0s_controller_runs_kubelet(words) is runs


# --------------------------------------------------------------------------- k3s and RKE2


def test_merge_rancher_config_replaces_with_key_and_appends_with_key_plus():
    documents = [
        ("/etc/rancher/k3s/config.yaml", {"kubelet-arg": ["a=1", "b=2"]}),
        ("/etc/rancher/k3s/config.yaml.d/10.yaml", {"kubelet-arg+": "c=3"}),  # a scalar is one value
        ("/etc/rancher/k3s/config.yaml.d/20.yaml", {"server": "https://x"}),
    ]
    assert merge_rancher_config(documents, "kubelet-arg") == (
        ["a=1", "b=2", "c=3"], ["/etc/rancher/k3s/config.yaml", "/etc/rancher/k3s/config.yaml.d/10.yaml"])
    # A later plain key replaces everything before it, appended values included.
    documents.append(("/etc/rancher/k3s/config.yaml.d/30.yaml", {"kubelet-arg": ["d=4"]}))
    assert merge_rancher_config(documents, "kubelet-arg") == (["d=4"], ["/etc/rancher/k3s/config.yaml.d/30.yaml"])
    assert merge_rancher_config(documents, "data-dir") == ([], [])


def test_rancher_kubelet_args_strip_config_and_redirect_it_into_the_managed_dir():
    # extractConfigArgs: config= becomes 10-cli-config.conf, config-dir= 20-cli-config-dir; the rest --key=value.
    given = args("config=/etc/rancher/k3s/kubelet.yaml", "--config-dir=/etc/k/dropins", "max-pods=200", "--v=2", "read-only-port")
    kubelet_args, redirects, problems = rancher_kubelet_args(given, MANAGED)
    assert values(kubelet_args) == ["--max-pods=200", "--v=2", "--read-only-port=true"]
    assert redirects == [(MANAGED + "/10-cli-config.conf", "/etc/rancher/k3s/kubelet.yaml"),
                         (MANAGED + "/20-cli-config-dir", "/etc/k/dropins")]
    assert problems == []


def test_rancher_kubelet_args_a_config_inside_the_managed_dir_is_not_redirected_and_an_empty_one_is_a_problem():
    kubelet_args, redirects, problems = rancher_kubelet_args(
        args("config=" + MANAGED + "/99-mine.conf", "config-dir=", origin="kubelet-arg in /etc/rancher/k3s/config.yaml"), MANAGED)
    assert kubelet_args == [] and redirects == []
    assert problems == ["kubelet-arg in /etc/rancher/k3s/config.yaml: value required for kubelet-arg --config-dir"]


def test_rancher_before_v1_32_passes_every_arg_as_a_flag_after_its_default_eviction_hard():
    kubelet_args = rancher_flag_only_kubelet_args(args("config=/etc/k.yaml", "max-pods=200"), "k3s")
    assert values(kubelet_args) == ["--eviction-hard=" + RANCHER_EVICTION_HARD, "--config=/etc/k.yaml", "--max-pods=200"]
    assert kubelet_args[0].origin == "k3s agent (its default flags)"
    # A user eviction-hard replaces the agent's default (no memory.available in the default).
    assert values(rancher_flag_only_kubelet_args(args("eviction-hard=memory.available<1Gi"), "rke2")) == [
        "--eviction-hard=memory.available<1Gi"]
    assert "memory.available" not in RANCHER_EVICTION_HARD


# --------------------------------------------------------------------------- MicroK8s and k0s


def test_bash_array_words_expand_variables_drop_comments_and_unquote():
    text = '# kubelet args\n--config=${SNAP_DATA}/args/kubelet.yaml\n--node-labels="a=b c"  # trailing\n--root-dir=$SNAP_COMMON/var/lib/kubelet\n--x=$UNSET\n'
    variables = {"SNAP_DATA": "/var/snap/microk8s/current", "SNAP_COMMON": "/var/snap/microk8s/common"}
    assert bash_array_words(text, variables) == ([
        "--config=/var/snap/microk8s/current/args/kubelet.yaml",
        "--node-labels=a=b c",
        "--root-dir=/var/snap/microk8s/common/var/lib/kubelet",
        "--x=",  # an unset variable expands to nothing, as in bash
    ], None)


def test_bash_array_words_report_an_unbalanced_quote():
    words, error = bash_array_words('--config="/x\n', {})
    assert words == [] and error == "No closing quotation"


def test_k0s_extra_args_split_like_k0s():
    assert k0s_extra_args("--reserved-memory=0:memory=5Gi  --v=2\t--reserved-memory=1:memory=1Gi --node-labels='a=b'") == [
        "--node-labels='a=b'",  # k0s does not unquote: strings.Fields
        "--reserved-memory=1:memory=1Gi",
        "--v=2",
    ]
    assert k0s_extra_args("") == []
