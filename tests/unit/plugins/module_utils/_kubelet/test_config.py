# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/config.py: the --config-dir walk as kubelet's filepath.WalkDir does it, and
load_kubelet_settings: where the configuration is found, its files read (or refused, naming them), the command line."""

from __future__ import annotations

import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import OptionError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import go_ext, load_kubelet_settings, walk_config_dir
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import MemoryReservation
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import build_node_tree

MiB = 1024 * 1024
GiB = 1024 * MiB

# The machine of spec 10 (G19-G21): 4429185024 B = 4224Mi of memory reserved on each node.
G19_RESERVED = 4429185024
G19_CONFIG = {
    "memoryManagerPolicy": "Static",
    "reservedMemory": [{"numaNode": 0, "limits": {"memory": "4224Mi"}}, {"numaNode": 1, "limits": {"memory": "4224Mi"}}],
    # 2 x 4224Mi = 8348Mi systemReserved + 100Mi default hard eviction
    "systemReserved": {"memory": "8348Mi", "cpu": "500m"},
}

YAML_CONFIG = """\
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# the memory manager
memoryManagerPolicy: Static
reservedMemory:
  - numaNode: 0
    limits:
      memory: 1Gi
      hugepages-1Gi: 2Gi
  - numaNode: 1
    limits:
      memory: 1536Mi
systemReserved:
  cpu: "1"
  memory: 2Gi
  hugepages-1Gi: 2Gi
kubeReserved:
  memory: 312Mi
  ephemeral-storage: 1Gi
evictionHard:
  memory.available: 200Mi
  nodefs.available: "10%"
"""


def settings_for(tmp_path, config=None, **kwargs):
    """load_kubelet_settings of a node tree whose kubeadm config file is ``config`` (none when None)."""
    root = build_node_tree(tmp_path, kubelet_config=config) if config is not None else build_node_tree(tmp_path)
    return load_kubelet_settings(HostFiles(root), **kwargs)


def write(root, node_path, text="{}"):
    path = os.path.join(str(root), node_path.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def test_go_ext_is_filepath_ext():
    assert [go_ext(name) for name in ("a.conf", ".conf", "a.conf.bak", "README", "a.")] == [".conf", ".conf", ".bak", "", "."]


def test_the_walk_is_lexical_recurses_in_place_and_keeps_only_conf(tmp_path):
    for name in ("/d/20-b.conf", "/d/100-a.conf", "/d/15/x.conf", "/d/20-b.conf.bak", "/d/README"):
        write(tmp_path, name)
    found, problems = walk_config_dir(HostFiles(str(tmp_path)), "/d")
    assert [shown for shown, _source in found] == ["/d/100-a.conf", "/d/15/x.conf", "/d/20-b.conf"] and problems == []


def test_a_missing_dir_is_a_problem_naming_it(tmp_path):
    assert walk_config_dir(HostFiles(str(tmp_path)), "/etc/kubernetes/kubelet.conf.d") == (
        [], ["kubelet --config-dir /etc/kubernetes/kubelet.conf.d does not exist (kubelet would not start)"])


def test_a_drop_in_linked_absolutely_is_listed_and_read_under_root(tmp_path):
    write(tmp_path, "/srv/numa.conf")
    os.makedirs(str(tmp_path / "d"))
    os.symlink("/srv/numa.conf", str(tmp_path / "d/50-numa.conf"))
    assert walk_config_dir(HostFiles(str(tmp_path)), "/d") == ([("/d/50-numa.conf", "/d/50-numa.conf")], [])


# --------------------------------------------------------------------------- loading


def test_defaults_when_nothing_is_configured(tmp_path):
    settings = settings_for(tmp_path)
    assert settings.policy == "None"
    assert settings.field_sources["policy"] == "default"
    assert settings.reserved_memory == {} and settings.reserved_memory_entries == ()
    assert settings.system_reserved == {} and settings.kube_reserved == {}
    assert settings.eviction_hard_memory is None  # kubelet sets its default thresholds only with a --config file
    assert settings.root_dir == "/var/lib/kubelet"
    assert settings.config_path == "/var/lib/kubelet/config.yaml"
    assert settings.problems == ()
    # Nothing names a kubelet configuration: no verdict may be built on invented defaults.
    assert settings.distribution == "unknown" and settings.service is None
    assert len(settings.config_problems) == 1 and "no kubelet configuration found" in settings.config_problems[0]


def test_yaml_config(tmp_path):
    settings = settings_for(tmp_path, YAML_CONFIG)
    # cmd/kubelet/app/server.go parseResourceList: cpu, memory, ephemeral-storage and pid only.
    assert settings.problems == (
        'kubelet config: systemReserved value failed to parse: cannot reserve "hugepages-1Gi" resource '
        "(only cpu, memory, ephemeral-storage, pid can be reserved)",
    )
    assert settings.policy == "Static" and settings.field_sources["policy"] == "/var/lib/kubelet/config.yaml"
    assert settings.distribution == "kubeadm" and settings.config_problems == ()
    assert settings.reserved_memory == {0: {"memory": GiB, "hugepages-1Gi": 2 * GiB}, 1: {"memory": 1536 * MiB}}
    assert settings.system_reserved == {"memory": 2 * GiB, "hugepages-1Gi": 2 * GiB}  # cpu is not memory
    assert settings.kube_reserved == {"memory": 312 * MiB}
    assert settings.eviction_hard_memory == "200Mi"
    assert "/var/lib/kubelet/config.yaml" in settings.sources


def test_json_config(tmp_path):
    settings = settings_for(tmp_path, G19_CONFIG)
    assert settings.problems == ()
    assert settings.policy == "Static"
    assert settings.reserved_memory == {0: {"memory": G19_RESERVED}, 1: {"memory": G19_RESERVED}}
    assert settings.system_reserved == {"memory": 8348 * MiB}


def test_yaml_outside_the_subset_is_a_clear_problem_naming_file_and_line(tmp_path):
    text = YAML_CONFIG.replace("memoryManagerPolicy: Static", "memoryManagerPolicy: &policy Static")
    line = text.splitlines().index("memoryManagerPolicy: &policy Static") + 1
    settings = settings_for(tmp_path, text)
    # Kubelet may well read an anchor: the probe does not claim it would not start.
    assert settings.config_problems == (
        "kubelet --config: /var/lib/kubelet/config.yaml: line %d: anchors (&) are not supported "
        "(the probe reads a subset of YAML: pass the kubelet options explicitly)" % line,
    )
    assert settings.policy == "None"  # nothing was read


def test_yaml_outside_the_subset_with_explicit_values(tmp_path):
    text = YAML_CONFIG.replace("memoryManagerPolicy: Static", "memoryManagerPolicy: !!str Static")
    settings = settings_for(tmp_path, text, policy="Static", reserved_memory={0: {"memory": "1Gi"}})
    assert settings.policy == "Static" and settings.reserved_memory == {0: {"memory": GiB}}
    # The file's other reservations stay unknown: the configuration is still refused as unknown.
    assert len(settings.config_problems) == 1 and "tags (!) are not supported" in settings.config_problems[0]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("- memoryManagerPolicy: Static\n", "is a list, not a KubeletConfiguration mapping"),
        ("just words\n", "the document is a string, not a KubeletConfiguration mapping"),
        ("memoryManagerPolicy: [Static\n", "not valid YAML"),
        ('{"kind": "Pod", "memoryManagerPolicy": "Static"}', "'Pod', not a KubeletConfiguration"),
        ("a: 1\n---\nb: 2\n", "line 2: more than one document is not supported"),
        ("memoryManagerPolicy: .inf\n", "not valid YAML: line 1: .inf cannot be converted to JSON"),
    ],
)
def test_bad_config_documents_are_problems(tmp_path, text, fragment):
    settings = settings_for(tmp_path, text)
    assert len(settings.config_problems) == 1 and fragment in settings.config_problems[0]
    assert "/var/lib/kubelet/config.yaml" in settings.config_problems[0]
    assert settings.problems == () and settings.policy == "None"


def test_empty_config_file_is_refused_as_kubelet_refuses_it(tmp_path):
    # kubeletconfig/configfiles Load: "no configuration is an error" - kubelet does not start on defaults.
    settings = settings_for(tmp_path, "")
    assert settings.config_problems and 'kubelet config file "/var/lib/kubelet/config.yaml" was empty' in settings.config_problems[0]


def test_alias_bomb_is_refused_at_once(tmp_path):
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    for index in range(1, 9):
        bomb += "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n" % ((chr(97 + index),) * 2 + (chr(96 + index),) * 9)
    bomb += "memoryManagerPolicy: Static\n"
    settings = settings_for(tmp_path, bomb)
    assert settings.policy == "None"
    assert len(settings.config_problems) == 1 and "config.yaml: line 1: anchors (&) are not supported" in settings.config_problems[0]


def test_oversized_config_file_is_refused(tmp_path):
    settings = settings_for(tmp_path, "#" * (4 * 1024 * 1024 + 10))
    assert len(settings.config_problems) == 1 and "is larger than" in settings.config_problems[0]


def test_explicit_config_that_is_missing_is_a_problem(tmp_path):
    settings = settings_for(tmp_path, config_path="/etc/kubernetes/kubelet.yaml")
    assert settings.config_path == "/etc/kubernetes/kubelet.yaml"
    assert len(settings.config_problems) == 1 and "/etc/kubernetes/kubelet.yaml does not exist" in settings.config_problems[0]


def test_config_path_that_is_a_directory_is_a_problem(tmp_path):
    root = build_node_tree(tmp_path)
    os.makedirs(os.path.join(root, "var/lib/kubelet/config.yaml"))
    settings = load_kubelet_settings(HostFiles(root))
    assert len(settings.config_problems) == 1 and "not a regular file" in settings.config_problems[0]


def test_unreadable_config_file_is_a_problem(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config=G19_CONFIG)
    path = os.path.join(root, "var/lib/kubelet/config.yaml")
    with open(path, "wb") as handle:
        handle.write(b"memoryManagerPolicy: \xff\xfe\n")
    settings = load_kubelet_settings(HostFiles(root))
    assert len(settings.config_problems) == 1 and "not UTF-8" in settings.config_problems[0]


def test_flags_as_a_single_string_with_quotes(tmp_path):
    settings = settings_for(
        tmp_path, flags='--memory-manager-policy Static --reserved-memory "0:memory=1Gi;1:memory=2Gi" --root-dir=/srv/k'
    )
    assert settings.policy == "Static"
    assert settings.reserved_memory == {0: {"memory": GiB}, 1: {"memory": 2 * GiB}}
    assert settings.root_dir == "/srv/k"


def test_unbalanced_quotes_in_flags_are_a_problem(tmp_path):
    settings = settings_for(tmp_path, flags='--memory-manager-policy "Static')
    assert any("cannot split kubelet flags" in problem for problem in settings.problems)


def test_non_string_flags_fail_naming_the_option_and_what_it_takes(tmp_path):
    # The operator's mistake, not the node's: no verdict, the task fails (OptionError) naming kubelet_flags.
    with pytest.raises(OptionError) as raised:
        settings_for(tmp_path, flags=["--memory-manager-policy=Static", 5])
    assert str(raised.value) == "kubelet_flags must be kubelet's command line as a string or a list of strings; item 2 is an integer (5)"
    with pytest.raises(OptionError) as raised:
        settings_for(tmp_path, flags={"a": 1})
    assert str(raised.value) == "kubelet_flags must be kubelet's command line as a string or a list of strings, got a mapping"


def test_flags_from_kubeadm_and_distribution_env_files(tmp_path):
    root = build_node_tree(
        tmp_path,
        kubelet_config=G19_CONFIG,
        kubeadm_flags="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --memory-manager-policy=None",
        extra_args="--memory-manager-policy=Static --reserved-memory 0:memory=5Gi",
    )
    settings = load_kubelet_settings(HostFiles(root))
    assert settings.policy == "Static"  # KUBELET_EXTRA_ARGS come after KUBELET_KUBEADM_ARGS
    assert settings.reserved_memory == {0: {"memory": 5 * GiB}}
    assert settings.sources[:2] == ("/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet")
    assert settings.field_sources["policy"] == "flag --memory-manager-policy (KUBELET_EXTRA_ARGS from /etc/default/kubelet:1)"


def test_flags_from_sysconfig(tmp_path):
    root = build_node_tree(tmp_path, extra_args="--root-dir=/data/kubelet", extra_args_file="/etc/sysconfig/kubelet")
    settings = load_kubelet_settings(HostFiles(root))
    assert settings.root_dir == "/data/kubelet"
    assert settings.field_sources["root_dir"] == "flag --root-dir (KUBELET_EXTRA_ARGS from /etc/sysconfig/kubelet:1)"
    assert settings.config_path == "/data/kubelet/config.yaml"


def test_explicit_flags_replace_the_discovered_command_line(tmp_path):
    root = build_node_tree(tmp_path, kubeadm_flags="--reserved-memory=0:memory=2Gi")
    assert load_kubelet_settings(HostFiles(root)).reserved_memory_entries == (MemoryReservation(0, (("memory", 2 * GiB),)),)
    explicit = ["--reserved-memory=0:memory=1Gi"]
    assert load_kubelet_settings(HostFiles(root), flags=explicit).reserved_memory_entries == (
        MemoryReservation(0, (("memory", GiB),)),
    )


def test_root_dir_flag_moves_the_default_config(tmp_path):
    root = build_node_tree(
        tmp_path, kubelet_config=G19_CONFIG, kubelet_config_path="/data/kubelet/config.yaml"
    )
    settings = load_kubelet_settings(HostFiles(root), flags=["--root-dir", "/data/kubelet"])
    assert settings.policy == "Static" and settings.config_path == "/data/kubelet/config.yaml"


def test_config_flag_names_the_config(tmp_path):
    root = build_node_tree(tmp_path, kubelet_config=G19_CONFIG, kubelet_config_path="/etc/kubernetes/kubelet.yaml")
    settings = load_kubelet_settings(HostFiles(root), flags=["--config=/etc/kubernetes/kubelet.yaml"])
    assert settings.policy == "Static"
    assert settings.field_sources["config_path"] == "flag --config (option kubelet_flags)"


def test_option_root_dir_beats_the_flag(tmp_path):
    settings = settings_for(tmp_path, flags=["--root-dir=/a"], kubelet_root_dir="/b")
    assert settings.root_dir == "/b" and settings.field_sources["root_dir"] == "option kubelet_root_dir"


def test_missing_config_dir_flag_target_is_a_config_problem(tmp_path):
    settings = settings_for(tmp_path, flags=["--config-dir=/etc/kubernetes/kubelet.conf.d"])
    assert settings.config_dir == "/etc/kubernetes/kubelet.conf.d"
    assert settings.config_problems == (
        "kubelet --config-dir /etc/kubernetes/kubelet.conf.d does not exist (kubelet would not start)",
    )


def test_walk_recurses_into_sub_directories_at_their_place(tmp_path):
    root = str(tmp_path)
    for name in ("a.conf", "b/c.conf", "b/d.txt", "c.conf", ".conf"):
        path = os.path.join(root, "d", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()
    found, problems = walk_config_dir(HostFiles(root), "/d")
    assert problems == []
    assert [shown for shown, _source in found] == ["/d/.conf", "/d/a.conf", "/d/b/c.conf", "/d/c.conf"]
    assert go_ext("x.conf.bak") == ".bak" and go_ext(".conf") == ".conf" and go_ext("README") == ""
