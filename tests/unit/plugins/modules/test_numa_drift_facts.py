# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""numa_drift_facts driven in-process over fake node trees: verdicts, returned facts, read-only."""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import ERAS
from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint, numa_drift_facts, numa_drift_metrics
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    MIB,
    checkpoint_file,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import (
    DEFAULT_AUTO_BOUND,
    KASLR_KB,
    NON_REPAIRABLE,
    UNREADABLE_CHECKPOINTS,
    boot_with_hugepages,
    kaslr_node,
    mixed_pods,
    nearly_full_node,
)

KASLR_BYTES = KASLR_KB * 1024


def probe_fails(run, root):
    """Run the facts module on a node whose required files cannot be read: a failure, nothing written; its msg."""
    before = tree_snapshot(root)
    result = run(numa_drift_facts, {"root": root})
    assert tree_snapshot(root) == before
    assert result["failed"] is True
    assert "numa_drift" not in result
    return result["msg"]


def probe(run, root, check_mode=False, **options):
    """Run the facts module; it must succeed, change nothing and return ``numa_drift``."""
    before = tree_snapshot(root)
    result = run(numa_drift_facts, dict(root=root, **options), check_mode=check_mode)
    assert tree_snapshot(root) == before, "numa_drift_facts wrote under the node root"
    assert result["changed"] is False
    assert not result.get("failed"), result.get("msg")
    return result["numa_drift"]


def node_view(facts, node_id):
    (view,) = [view for view in facts["nodes"] if view["node"] == node_id]
    return view


def test_in_sync_node(run, tmp_path):
    boot = boot_with_hugepages()
    root = write_kubelet_node(str(tmp_path / "node"), boot, pods=mixed_pods())
    facts = probe(run, root)
    assert facts["verdict"] == "in_sync"
    assert facts["repairable"] is False
    assert [cause["verdict"] for cause in facts["causes"]] == ["in_sync"]
    assert facts["bound_bytes"] == DEFAULT_AUTO_BOUND
    assert facts["bound_source"].startswith("auto")
    for node_id in (0, 1):
        view = node_view(facts, node_id)
        assert view["memory"]["recorded_total"] == view["memory"]["current_total"] == 16 * GIB
        assert view["memory"]["current_allocatable"] == 16 * GIB - 1 * GIB - 4 * GIB  # reserved, 1Gi pages
        assert view["memory"]["delta_total"] == view["memory"]["delta_allocatable"] == 0
        assert view["hugepages"]["hugepages-1Gi"]["current_total"] == 4 * GIB
        assert view["hugepages"]["hugepages-1Gi"]["delta_total"] == 0
    ckpt = facts["checkpoint"]
    assert ckpt["path"] == checkpoint_file(root)
    assert ckpt["exists"] is True
    assert ckpt["layout"] == "legacy"
    assert ckpt["checksum_ok"] is True
    assert ckpt["accepted_by"] == list(ERAS)
    assert (ckpt["pods"], ckpt["containers"], ckpt["blocks"]) == (4, 5, 6)
    assert ckpt["policy"] == "Static"
    assert facts["kernel_image"]["start"] == 16 * MIB
    assert facts["kernel_image"]["size"] == 32 * MIB
    assert facts["kernel_image"]["numa_nodes"] == [0]
    assert facts["summary"].startswith("in_sync;")
    assert "4 pods/5 containers/6 blocks" in facts["summary"]


def test_no_checkpoint_still_derives_the_bound(run, tmp_path):
    root = write_kubelet_node(str(tmp_path / "node"), boot_with_hugepages(), checkpoint_bytes=b"")
    assert not os.path.exists(checkpoint_file(root))
    facts = probe(run, root)
    assert facts["verdict"] == "no_checkpoint"
    assert facts["repairable"] is False
    assert facts["checkpoint"] == {"path": checkpoint_file(root), "exists": False}
    assert facts["bound_bytes"] == DEFAULT_AUTO_BOUND
    assert facts["nodes"] == []


@pytest.mark.parametrize("layout", ["legacy", "v3"])
def test_kaslr_move_is_drift_within_bound(run, tmp_path, layout):
    root = kaslr_node(tmp_path, layout=layout)
    facts = probe(run, root)
    assert facts["verdict"] == "drift_within_bound"
    assert facts["repairable"] is True
    assert {cause["verdict"] for cause in facts["causes"]} == {"drift_within_bound"}
    assert len(facts["causes"]) == 4  # total and allocatable of both nodes
    assert facts["bound_bytes"] == DEFAULT_AUTO_BOUND
    node0, node1 = node_view(facts, 0), node_view(facts, 1)
    assert node0["memory"]["delta_total"] == node0["memory"]["delta_allocatable"] == -KASLR_BYTES
    assert node1["memory"]["delta_total"] == node1["memory"]["delta_allocatable"] == KASLR_BYTES
    assert node0["memory"]["recorded_total"] - node0["memory"]["current_total"] == KASLR_BYTES
    assert node0["within_bound"] is node1["within_bound"] is True
    assert node0["holds_kernel_image"] is True and node1["holds_kernel_image"] is False
    assert all(pool["delta_total"] == 0 for pool in node1["hugepages"].values())
    assert facts["checkpoint"]["layout"] == layout
    assert facts["checkpoint"]["write_layout"] == layout
    assert facts["summary"].startswith("drift_within_bound; memory node0 -44.2 MiB, node1 +44.2 MiB; bound 96 MiB")


def test_kaslr_move_with_drift_bound_off_exceeds(run, tmp_path):
    facts = probe(run, kaslr_node(tmp_path), drift_bound="off")
    assert facts["verdict"] == "drift_exceeds_bound"
    assert facts["bound_bytes"] == 0
    assert facts["bound_source"].startswith("off")
    assert node_view(facts, 0)["within_bound"] is False


def test_move_of_200_mib_exceeds_auto_bound_but_fits_an_explicit_one(run, tmp_path):
    build, _verdict = NON_REPAIRABLE["drift_exceeds_bound"]
    root = build(tmp_path)
    facts = probe(run, root)
    assert facts["verdict"] == "drift_exceeds_bound"
    assert facts["repairable"] is False
    assert node_view(facts, 0)["memory"]["delta_total"] == -200 * MIB
    assert node_view(facts, 0)["within_bound"] is False
    assert any("more than the bound of %d bytes" % DEFAULT_AUTO_BOUND in c["message"] for c in facts["causes"])
    explicit = probe(run, root, drift_bound="256Mi")
    assert explicit["verdict"] == "drift_within_bound"
    assert explicit["bound_bytes"] == 256 * MIB
    assert explicit["bound_source"] == "fixed: 256Mi"


def test_explicit_bound_replaces_an_unknown_one(run, tmp_path):
    build, _verdict = NON_REPAIRABLE["bound_unknown_zeroed_iomem"]
    root = build(tmp_path)
    unknown = probe(run, root)
    assert unknown["verdict"] == "bound_unknown"
    assert unknown["bound_bytes"] is None
    assert unknown["kernel_image"]["unknown_reason"]
    assert "CAP_SYS_ADMIN" in unknown["summary"] or "root" in unknown["advice"]
    assert probe(run, root, drift_bound="128Mi")["verdict"] == "drift_within_bound"


@pytest.mark.parametrize("case", sorted(NON_REPAIRABLE))
def test_non_repairable_verdicts(run, tmp_path, case):
    build, verdict = NON_REPAIRABLE[case]
    facts = probe(run, build(tmp_path))
    assert facts["verdict"] == verdict
    assert facts["repairable"] is False
    messages = [cause["message"] for cause in facts["causes"] if cause["verdict"] == verdict]
    assert messages and all(messages), facts["causes"]
    assert facts["summary"].startswith(verdict + ";")
    assert messages[0] in facts["summary"]
    assert facts["advice"]


def test_every_cause_is_listed_not_only_the_first(run, tmp_path):
    build, _verdict = NON_REPAIRABLE["hugepages_changed"]
    facts = probe(run, build(tmp_path))
    found = {cause["verdict"] for cause in facts["causes"]}
    assert facts["verdict"] == "hugepages_changed"
    assert {"hugepages_changed", "drift_within_bound"} <= found
    pool = node_view(facts, 1)["hugepages"]["hugepages-1Gi"]
    assert (pool["recorded_total"], pool["current_total"], pool["delta_total"]) == (4 * GIB, 2 * GIB, -2 * GIB)


def test_nearly_full_node_fitting_by_zero_bytes_is_repairable(run, tmp_path):
    facts = probe(run, nearly_full_node(tmp_path, short_by=0))
    assert facts["verdict"] == "drift_within_bound"
    assert facts["repairable"] is True


def test_cross_numa_group_drift_is_repairable(run, tmp_path):
    pods = {"pod-wide-0000-0000-0000-000000000000": {"app": [([0, 1], "memory", 20 * GIB)]}}
    facts = probe(run, kaslr_node(tmp_path, pods=pods))
    assert facts["verdict"] == "drift_within_bound"
    assert facts["checkpoint"]["blocks"] == 1


def test_check_mode_returns_the_same_facts(run, tmp_path):
    root = kaslr_node(tmp_path)
    assert probe(run, root, check_mode=True) == probe(run, root)


def test_four_numa_nodes_with_kibibyte_losses(run, tmp_path):
    recorded = two_node_boot()
    recorded.mem_total_kb = {node_id: 8 * GIB // 1024 for node_id in range(4)}
    current = recorded.moved(node0=-12, node1=-4, node2=0, node3=-36)
    root = write_kubelet_node(str(tmp_path / "node"), recorded, current)
    facts = probe(run, root)
    assert facts["verdict"] == "drift_within_bound"
    assert [node_view(facts, n)["memory"]["delta_total"] for n in range(4)] == [-12 * 1024, -4 * 1024, 0, -36 * 1024]


# --- hostile inputs: a verdict or a clean failure, never a traceback ---------------------


def test_meminfo_with_letters(run, tmp_path):
    root = kaslr_node(tmp_path)
    with open(os.path.join(root, "sys/devices/system/node/node0/meminfo"), "w") as handle:
        handle.write("Node 0 MemTotal:       6710x8864 kB\nNode 0 MemFree: lots kB\n")
    assert probe_fails(run, root) == (
        "cannot read the node under %s: the node's NUMA memory cannot be read: %s/sys/devices/system/node/node0/meminfo: "
        "no 'MemTotal: <number> kB' line" % (root, root)
    )


def test_iomem_with_17_hex_digit_addresses_only(run, tmp_path):
    iomem = (
        "00100000-1ffffffffffffffff : System RAM\n"
        "  10000000001000000-10000000001dfffff : Kernel code\n"
        "  10000000002000000-100000000023fffff : Kernel data\n"
        "  10000000002600000-100000000027fffff : Kernel bss\n"
    )
    facts = probe(run, kaslr_node(tmp_path, iomem=iomem))
    assert facts["verdict"] == "bound_unknown"
    assert facts["bound_bytes"] is None
    assert facts["kernel_image"]["size"] is None


def test_iomem_overflowing_line_is_skipped(run, tmp_path):
    # Spec 7.2 step 2: a range that does not parse as 64-bit hexadecimal is skipped.
    iomem = (
        "00100000-fffffffff : System RAM\n"
        "  10000000001000000-10000000001dfffff : Kernel code\n"
        "  02000000-023fffff : Kernel data\n"
        "  02600000-027fffff : Kernel bss\n"
    )
    facts = probe(run, kaslr_node(tmp_path, iomem=iomem))
    assert facts["kernel_image"]["start"] == 0x2000000
    assert facts["kernel_image"]["size"] == 8 * MIB
    assert facts["bound_bytes"] == 72 * MIB
    assert facts["verdict"] == "drift_within_bound"


def test_missing_numa_node_directory(run, tmp_path):
    root = kaslr_node(tmp_path)
    shutil.rmtree(os.path.join(root, "sys/devices/system/node/node1"))
    facts = probe(run, root)
    # reservedMemory still names node 1: kubelet's NewManager refuses the configuration before the checkpoint.
    assert facts["verdict"] == "kubelet_config_rejected"
    assert "topology_changed" in {cause["verdict"] for cause in facts["causes"]}


def test_missing_sysfs_node_tree(run, tmp_path):
    root = kaslr_node(tmp_path)
    shutil.rmtree(os.path.join(root, "sys/devices/system/node"))
    message = probe_fails(run, root)
    assert "%s/sys/devices/system/node does not exist: kubelet would see no NUMA topology" % root in message


def test_unreadable_kubelet_config_is_not_repairable(run, tmp_path):
    root = kaslr_node(tmp_path, config="{{{ not: yaml: [\n")
    facts = probe(run, root)
    assert facts["repairable"] is False
    assert facts["kubelet"]["problems"]
    # Kubelet itself would not start on it: the file is named, no verdict about the checkpoint.
    assert facts["verdict"] == "kubelet_config_unknown"
    assert any("/var/lib/kubelet/config.yaml: not valid YAML" in cause["message"] for cause in facts["causes"])


@pytest.mark.parametrize("bound", ["12 parsecs", "-5Mi", "1e400", ""])
def test_invalid_drift_bound_fails_cleanly(run, tmp_path, bound):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(numa_drift_facts, {"root": root, "drift_bound": bound})
    assert result["failed"] is True
    assert result["msg"].startswith("drift_bound: ")
    assert "numa_drift" not in result
    assert tree_snapshot(root) == before


def test_root_without_anything(run, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "the node's NUMA memory cannot be read: %s/sys/devices/system/node does not exist" % empty in probe_fails(run, str(empty))


@pytest.mark.parametrize("kind", sorted(UNREADABLE_CHECKPOINTS))
def test_checkpoint_path_that_is_not_a_file(run, tmp_path, kind):
    root = kaslr_node(tmp_path)
    path = UNREADABLE_CHECKPOINTS[kind](root)
    before = tree_snapshot(root)
    result = run(numa_drift_facts, {"root": root})
    assert tree_snapshot(root) == before
    if result.get("failed"):
        assert path in result["msg"]
    else:
        assert result["numa_drift"]["verdict"] == "corrupt"


RESERVED_MEMORY_TAKES = ("a mapping from NUMA node to limits ({0: {memory: 1Gi}}) or a list as kubelet's reservedMemory "
                         "([{numaNode: 0, limits: {memory: 1Gi}}])")


@pytest.mark.parametrize("module", [numa_drift_facts, kubelet_mm_checkpoint, numa_drift_metrics],
                         ids=lambda module: module.__name__.rsplit(".", maxsplit=1)[-1])
@pytest.mark.parametrize("options, message", [
    # reserved_memory=5 on the command line: the module gets the string "5".
    ({"reserved_memory": "5"}, "reserved_memory must be %s, got a string ('5')" % RESERVED_MEMORY_TAKES),
    ({"reserved_memory": 5}, "reserved_memory must be %s, got an integer (5)" % RESERVED_MEMORY_TAKES),
    ({"reserved_memory": {"0": "1Gi"}}, "reserved_memory[0]: limits must be a mapping of resource to quantity, got a string"),
    ({"reserved_memory": {"0": {"memory": "1 Gi"}}}, "reserved_memory[0] memory: '1 Gi' is not a Kubernetes quantity (examples: 1Gi, 128Mi, 64Ki, "
                                                     "500M, 4096)"),
    ({"kubelet_flags": ["--v=2", 3]}, "kubelet_flags must be kubelet's command line as a string or a list of strings; item 2 is an integer (3)"),
    ({"kubelet_release": "one"}, "kubelet_release: 'one' is not a kubelet release such as 1.34 or v1.34.4"),
])
def test_a_mistyped_node_option_fails_naming_it_and_what_it_takes(run, tmp_path, module, options, message):
    # Not a verdict about the node (it used to be kubelet_config_rejected, rc 0, "got _AnsibleTaggedStr"): the task fails.
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(module, dict(root=root, **options))
    assert result["failed"] is True and "numa_drift" not in result
    assert result["msg"] == message
    assert tree_snapshot(root) == before
