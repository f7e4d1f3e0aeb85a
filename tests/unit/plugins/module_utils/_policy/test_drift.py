# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdicts, the bound and the repair plan, on fake nodes after a reboot (design.md, spec 8)."""

from __future__ import annotations

import os
import re
import struct

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_for_layout, marshal_legacy
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import Block, CheckpointFields, ERAS
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy import drift
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError, parse_quantity
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import (
    PR_140473_IOMEM,
    build_node_tree,
    iomem_text,
)
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    HUGEPAGE_1G_KB,
    HUGEPAGE_2M_KB,
    KIB,
    MIB,
    Boot,
    disagreeing_checkpoint,
    guaranteed_pods,
    kubelet_config,
    recorded_checkpoint,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)

KERNEL_START = 0x1000000


def _float32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


def image_iomem(span, ram_end=512 * GIB):
    """An iomem whose kernel image (code .. bss) spans ``span`` bytes."""
    code, data = span // 2, span // 8
    sections = (("Kernel code", code), ("Kernel rodata", span // 4), ("Kernel data", data),
                ("Kernel bss", span - code - span // 4 - data))
    return iomem_text(kernel_start=KERNEL_START, sections=sections, ram_end=ram_end)


def probe(tmp_path, recorded, current=None, bound="auto", **options):
    root = write_kubelet_node(str(tmp_path / "node"), recorded, current, **options)
    return _probe.probe(HostFiles(root), drift_bound=bound)


def assert_plan_is_what_kubelet_writes(result, current, pods, layout="legacy", reserved=None):
    """The repaired file: kubelet's own output for this boot, and in sync on re-probe."""
    plan = result.assessment.plan
    reserved = uniform_reserved(sorted(current.mem_total_kb)) if reserved is None else reserved
    assert plan.content == recorded_checkpoint(current, reserved, pods, layout)
    assert drift.verify_written(plan.content, plan) == []
    again = drift.assess(plan.content, result.node, result.settings, "auto")
    assert again.verdict == "in_sync", again.causes


# --- KASLR moves and boot-memory losses: repairable ---------------------------------------


@pytest.mark.parametrize("move_mib", [40, 44.19921875, 64, 100, 130])
def test_kaslr_move_between_two_nodes_is_within_the_auto_bound(tmp_path, move_mib):
    move_kb = int(move_mib * 1024) // 4 * 4
    before = two_node_boot()
    after = before.moved(node0=-move_kb, node1=move_kb)
    pods = guaranteed_pods(4, (0,), 2 * GIB)
    result = probe(tmp_path, before, after, pods=pods, iomem=image_iomem(move_kb * KIB))
    assert result.assessment.verdict == "drift_within_bound"
    assert result.assessment.bound_bytes == move_kb * KIB + 64 * MIB
    assert sum(d.delta("memory") for d in result.assessment.nodes) == 0
    assert_plan_is_what_kubelet_writes(result, after, pods)


@pytest.mark.parametrize("loss_kib", [4, 12, 44, 1024])
def test_kib_scale_loss_on_a_single_node(tmp_path, loss_kib):
    before = Boot({0: 65839165440 // KIB})
    after = before.moved(node0=-loss_kib)
    pods = guaranteed_pods(2, (0,), 8 * GIB)
    result = probe(tmp_path, before, after, pods=pods)
    assert result.assessment.verdict == "drift_within_bound"
    assert [d.delta("memory") for d in result.assessment.nodes] == [-loss_kib * KIB]
    assert_plan_is_what_kubelet_writes(result, after, pods)


@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_one_two_four_and_eight_numa_nodes(tmp_path, count):
    before = Boot({n: 16 * GIB // KIB for n in range(count)})
    moves = {"node%d" % n: (-45260 if n == 0 else 45260 if n == count - 1 else 0) for n in range(count)} if count > 1 else {"node0": -8}
    after = before.moved(**moves)
    pods = {"pod-%d" % n: {"c": [([n], "memory", GIB)]} for n in range(count)}
    result = probe(tmp_path, before, after, pods=pods)
    assert result.assessment.verdict == "drift_within_bound"
    assert len(result.assessment.nodes) == count
    assert_plan_is_what_kubelet_writes(result, after, pods)


def test_hugepages_of_both_sizes_with_memory_drift(tmp_path):
    pools = {HUGEPAGE_2M_KB: 512, HUGEPAGE_1G_KB: 4}
    before = Boot({0: 32 * GIB // KIB, 1: 32 * GIB // KIB}, {0: dict(pools), 1: dict(pools)})
    after = before.moved(node0=45260, node1=-45260)
    pods = {"p": {"c": [([0, 1], "memory", 20 * GIB), ([0, 1], "hugepages-1Gi", 6 * GIB), ([0, 1], "hugepages-2Mi", 512 * MIB)]}}
    result = probe(tmp_path, before, after, pods=pods)
    assert result.assessment.verdict == "drift_within_bound"
    assert_plan_is_what_kubelet_writes(result, after, pods)
    node0 = result.assessment.plan.fields.machine_state[0]
    assert node0.number_of_assignments == 3 and node0.cells == [0, 1]


def test_cross_numa_group_keeps_every_assignment_and_v3_layout(tmp_path):
    before = Boot({0: 8 * GIB // KIB, 1: 8 * GIB // KIB, 2: 8 * GIB // KIB, 3: 8 * GIB // KIB})
    after = before.moved(node1=-45260, node2=45260)
    pods = {"a": {"x": [([0, 1], "memory", 10 * GIB)]}, "b": {"y": [([2, 3], "memory", 3 * GIB)], "z": [([2, 3], "memory", GIB)]}}
    result = probe(tmp_path, before, after, pods=pods, layout="v3")
    assert result.assessment.verdict == "drift_within_bound"
    assert result.assessment.plan.layout == "v3"
    assert result.assessment.plan.fields.entries == result.assessment.report.content.entries
    assert_plan_is_what_kubelet_writes(result, after, pods, layout="v3")


def test_nearly_full_node_fits_by_zero_bytes(tmp_path):
    before = Boot({0: 16 * GIB // KIB})
    after = before.moved(node0=-45260)
    allocatable_after = after.mem_total_kb[0] * KIB - GIB
    pods = {"full": {"c": [([0], "memory", allocatable_after)]}}
    result = probe(tmp_path, before, after, pods=pods)
    assert result.assessment.verdict == "drift_within_bound"
    assert result.assessment.plan.fields.machine_state[0].memory_map["memory"].free == 0


def test_nearly_full_node_short_by_one_page_does_not_fit(tmp_path):
    before = Boot({0: 16 * GIB // KIB})
    after = before.moved(node0=-45260)
    pods = {"full": {"c": [([0], "memory", after.mem_total_kb[0] * KIB - GIB + 4096)]}}
    result = probe(tmp_path, before, after, pods=pods)
    assert result.assessment.verdict == "assignments_do_not_fit"
    assert "[memorymanager] (pod: full, container: c) the memory assignment does not fit the machine state" in \
        result.assessment.causes_for("assignments_do_not_fit")
    assert result.assessment.plan is None


def test_drift_equal_to_the_bound_is_within_and_one_page_more_is_not(tmp_path):
    before = two_node_boot()
    for move, verdict in ((100 * MIB, "drift_within_bound"), (100 * MIB + 4096, "drift_exceeds_bound")):
        after = before.moved(node0=-move // KIB, node1=move // KIB)
        result = probe(tmp_path / str(move), before, after, bound="100Mi")
        assert result.assessment.verdict == verdict
        assert result.assessment.bound_bytes == 100 * MIB


def test_auto_bound_of_the_pr_fixture_is_116_mib(tmp_path):
    result = probe(tmp_path, two_node_boot(), iomem=PR_140473_IOMEM)
    assert result.assessment.bound_bytes == 121634816
    assert result.assessment.bound_source == "auto: kernel image span 52 MiB + 64 MiB"


# --- Not repairable --------------------------------------------------------------------


def test_real_capacity_loss_exceeds_the_bound(tmp_path):
    before = two_node_boot()
    result = probe(tmp_path, before, before.moved(node0=-GIB // KIB))
    assert result.assessment.verdict == "drift_exceeds_bound"
    assert not result.assessment.repairable


def test_off_bound_refuses_any_drift(tmp_path):
    before = two_node_boot()
    result = probe(tmp_path, before, before.moved(node0=-4), bound="off")
    assert (result.assessment.verdict, result.assessment.bound_bytes) == ("drift_exceeds_bound", 0)


def test_zeroed_iomem_gives_bound_unknown_but_a_fixed_bound_still_works(tmp_path):
    before = two_node_boot()
    after = before.moved(node0=-45260, node1=45260)
    result = probe(tmp_path / "a", before, after, iomem=iomem_text(zeroed=True))
    assert result.assessment.verdict == "bound_unknown"
    assert result.assessment.bound_bytes is None
    assert "zero" in result.assessment.bound_source
    assert probe(tmp_path / "b", before, after, bound="128Mi", iomem=iomem_text(zeroed=True)).assessment.verdict == "drift_within_bound"


def test_zeroed_iomem_without_drift_is_in_sync(tmp_path):
    assert probe(tmp_path, two_node_boot(), iomem=iomem_text(zeroed=True)).assessment.verdict == "in_sync"


def test_hugepages_changed(tmp_path):
    before = two_node_boot(hugepages_1g=4)
    after = two_node_boot(hugepages_1g=2)
    result = probe(tmp_path, before, after)
    assert result.assessment.verdict == "hugepages_changed"
    # The 1Gi pages also make MemTotal's allocatable move: every cause is listed, not only the first.
    assert {cause.verdict for cause in result.assessment.causes} >= {"hugepages_changed"}


def test_topology_changed_when_a_node_disappears(tmp_path):
    before = two_node_boot()
    reserved = {0: {"memory": 2 * GIB}}
    result = probe(tmp_path, before, Boot({0: before.mem_total_kb[0]}), reserved=reserved, config=kubelet_config(reserved))
    assert result.assessment.verdict == "topology_changed"


def test_reserved_memory_on_a_vanished_node_is_a_configuration_kubelet_rejects(tmp_path):
    # memory_manager.go getTotalMemoryTypeReserved: NewManager fails before the checkpoint is read.
    before = two_node_boot()
    result = probe(tmp_path, before, Boot({0: before.mem_total_kb[0]}), reserved=uniform_reserved([0, 1]))
    assert result.assessment.verdict == "kubelet_config_rejected"
    first = result.assessment.causes[0]
    assert first.message.startswith("the reserved memory configuration references a NUMA node 1 that does not exist")
    assert "reservedMemory from " in first.message and "config.yaml" in first.message
    assert "topology_changed" in {cause.verdict for cause in result.assessment.causes}
    assert result.assessment.plan is None


def test_topology_changed_when_a_hugepage_size_appears(tmp_path):
    before = Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0}})
    after = Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: 0}})
    assert probe(tmp_path, before, after).assessment.verdict == "topology_changed"


def test_reserved_changed(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "n"), before, reserved=uniform_reserved([0, 1]),
                              config=kubelet_config(uniform_reserved([0, 1], 2 * GIB)))
    result = _probe.probe(HostFiles(root))
    assert result.assessment.verdict == "reserved_changed"
    assert any("system_reserved" in message for message in result.assessment.causes_for("reserved_changed"))


def test_node_allocatable_mismatch_is_reported_with_kubelets_text(tmp_path):
    config = kubelet_config(uniform_reserved([0, 1]))
    config["systemReserved"] = {"memory": "1Gi"}
    result = probe(tmp_path, two_node_boot(), config=config)
    assert result.assessment.verdict == "kubelet_config_rejected"
    assert result.assessment.causes_for("kubelet_config_rejected") == [
        'the total amount "2147483648" of type "memory" is not equal to the value "1124Mi" determined by Node Allocatable '
        "feature (reservedMemory from /var/lib/kubelet/config.yaml; systemReserved from /var/lib/kubelet/config.yaml; "
        "kubeReserved from default; evictionHard from default)"
    ]


def test_policy_mismatch_with_kubelets_text(tmp_path):
    before = two_node_boot()
    raw = recorded_checkpoint(before, uniform_reserved([0, 1]), {}, policy="static")
    result = probe(tmp_path, before, checkpoint_bytes=raw)
    assert result.assessment.verdict == "policy_mismatch"
    assert result.assessment.causes_for("policy_mismatch") == [
        '[memorymanager] configured policy "Static" differs from state checkpoint policy "static"'
    ]


def test_policy_none_with_none_checkpoint_is_in_sync(tmp_path):
    before = two_node_boot()
    raw = recorded_checkpoint(before, {}, {}, policy="None")
    config = {"memoryManagerPolicy": "None"}
    result = probe(tmp_path, before, before.moved(node0=-4 * 1024 * 1024), checkpoint_bytes=raw, config=config)
    assert result.assessment.verdict == "in_sync"


def test_kubelet_config_without_a_policy_defaults_to_policy_none(tmp_path):
    before = two_node_boot()
    result = probe(tmp_path, before, config="kind: KubeletConfiguration\n")
    assert result.assessment.verdict == "policy_mismatch"
    assert result.settings.policy == "None"


def test_empty_kubelet_config_is_refused_as_kubelet_refuses_it(tmp_path):
    # kubeletconfig/configfiles Load: a zero-byte file is an error, kubelet does not start on its defaults.
    result = probe(tmp_path, two_node_boot(), config="")
    assert result.assessment.verdict == "kubelet_config_unknown"
    assert 'kubelet config file "/var/lib/kubelet/config.yaml" was empty' in result.assessment.causes[0].message


@pytest.mark.parametrize("content", [b"{", b"", b"garbage", b"\x00" * 64, b'{"policyName":"Static","checksum":1}'])
def test_corrupt_and_its_bound_is_still_derived(tmp_path, content):
    result = probe(tmp_path, two_node_boot(), checkpoint_bytes=content or b" ")
    assert result.assessment.verdict == "corrupt"
    assert result.assessment.bound_bytes == 32 * MIB + 64 * MIB


def test_unsupported_layout_zero_checksum(tmp_path):
    before = two_node_boot()
    text = recorded_checkpoint(before, uniform_reserved([0, 1]), {}).decode()
    raw = (text[: text.rindex('"checksum":')] + '"checksum":0}').encode()
    result = probe(tmp_path, before, before.moved(node0=-4), checkpoint_bytes=raw)
    assert result.assessment.verdict == "unsupported_layout"
    assert "checksum is 0" in result.assessment.causes_for("unsupported_layout")[0]
    # Every cause is listed, the benign drift too.
    assert "drift_within_bound" in {c.verdict for c in result.assessment.causes}


def test_no_checkpoint(tmp_path):
    result = probe(tmp_path, two_node_boot(), checkpoint_bytes=b"")
    assert result.assessment.verdict == "no_checkpoint"
    assert result.assessment.bound_bytes is not None


def test_empty_machine_state_without_entries_is_in_sync(tmp_path):
    result = probe(tmp_path, two_node_boot(), checkpoint_bytes=b'{"policyName":"Static","machineState":{},"checksum":3940083781}')
    assert result.assessment.verdict == "in_sync"


def test_empty_machine_state_with_entries_cannot_be_restored(tmp_path):
    fields = CheckpointFields(policy_name="Static", machine_state={}, entries={"p": {"c": [Block([0], "memory", 1)]}})
    result = probe(tmp_path, two_node_boot(), checkpoint_bytes=marshal_legacy(fields))
    assert result.assessment.verdict == "assignments_do_not_fit"


def test_block_on_a_missing_resource(tmp_path):
    before = Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0}})
    pods = {"p": {"c": [([0], "hugepages-1Gi", GIB)]}}
    raw = recorded_checkpoint(Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: 2}}), uniform_reserved([0]), pods)
    result = probe(tmp_path, before, checkpoint_bytes=raw)
    assert result.assessment.verdict == "topology_changed"
    assert any("memory resource that does not exist" in m for m in result.assessment.causes_for("assignments_do_not_fit"))


def test_precedence_picks_the_first_cause_and_lists_all(tmp_path):
    before = two_node_boot(hugepages_1g=2)
    after = two_node_boot(hugepages_1g=1).moved(node0=-GIB // KIB)
    result = probe(tmp_path, before, after, iomem=iomem_text(zeroed=True))
    verdicts = {cause.verdict for cause in result.assessment.causes}
    assert result.assessment.verdict == "hugepages_changed"
    assert "bound_unknown" in verdicts


@pytest.mark.parametrize(
    "tree_options, verdict",
    [
        # An unreadable NUMA node directory or meminfo is a NodeReadError naming the file (test_node.py), not a verdict.
        ({"extra_files": {"proc/iomem": "ffffffffffffffffff-fffffffffffffffff : Kernel code\n"}}, "in_sync"),
    ],
)
def test_hostile_node_trees_give_a_verdict_not_a_traceback(tmp_path, tree_options, verdict):
    result = probe(tmp_path, two_node_boot(), **tree_options)
    assert result.assessment.verdict == verdict
    assert assessment_facts(result)["summary"].startswith(verdict)


def test_bound_option_validation(tmp_path):
    root = build_node_tree(str(tmp_path))
    with pytest.raises(QuantityError):
        _probe.probe(HostFiles(root), drift_bound="12 parsecs")
    with pytest.raises(QuantityError):
        _probe.probe(HostFiles(root), drift_bound="-1Mi")


def test_facts_view(tmp_path):
    before = two_node_boot()
    after = before.moved(node0=-45260, node1=45260)
    facts = assessment_facts(probe(tmp_path, before, after, pods=guaranteed_pods(2, (0, 1))))
    assert facts["verdict"] == "drift_within_bound" and facts["repairable"] is True
    assert facts["nodes"][0]["memory"]["delta_total"] == -45260 * KIB
    assert facts["nodes"][0]["holds_kernel_image"] is True and facts["nodes"][1]["holds_kernel_image"] is False
    assert facts["nodes"][0]["within_bound"] is True
    assert facts["checkpoint"]["pods"] == 2 and facts["checkpoint"]["accepted_by"] == list(ERAS)
    assert facts["kernel_image"]["size"] == 32 * MIB and facts["kernel_image"]["numa_nodes"] == [0]
    assert facts["summary"].startswith("drift_within_bound; memory node0 -44.2 MiB, node1 +44.2 MiB; bound 96 MiB")


# --- kubelet's own code decides (issue 23): configurations kubelet refuses, group sums, wraps ---------


@pytest.mark.parametrize("policy", ["static", "STATIC", "Static ", "Statik", "bestEffort", "BestEffort", "none"])
def test_a_policy_name_kubelet_does_not_know_is_a_rejected_configuration_not_a_policy_change(tmp_path, policy):
    # memory_manager.go NewManager: case-sensitive switch over None/Static/BestEffort (BestEffort: Windows only);
    # kubelet fails before it reads the checkpoint, so deleting the checkpoint would not help.
    before = two_node_boot()
    config = kubelet_config(uniform_reserved([0, 1]), policy=policy)
    result = probe(tmp_path, before, config=config)
    assert result.assessment.verdict == "kubelet_config_rejected"
    first = result.assessment.causes[0].message
    assert policy in first and "memoryManagerPolicy from /var/lib/kubelet/config.yaml" in first
    assert "policy_mismatch" in {cause.verdict for cause in result.assessment.causes}  # listed, not the verdict
    assert "checkpoint" in result.assessment.advice and "fix the value" in result.assessment.advice
    assert not result.assessment.repairable and result.assessment.plan is None


def test_a_rejected_configuration_comes_before_a_missing_checkpoint(tmp_path):
    root = write_kubelet_node(str(tmp_path / "n"), two_node_boot(), config=kubelet_config(uniform_reserved([0, 1]), policy="static"))
    os.remove(os.path.join(root, "var/lib/kubelet/memory_manager_state"))
    assert _probe.probe(HostFiles(root)).assessment.verdict == "kubelet_config_rejected"


def test_a_feature_gate_older_releases_refuse_is_a_rejected_configuration_even_without_checkpoint(tmp_path):
    # kubelet's TestCheckpointStateRestore (v1.36) "Restore non-existing checkpoint with PodLevelResourceManagers
    # enabled" as a node: v1.36/v1.37 start, v1.34/v1.35 refuse the gate before any checkpoint (not no_checkpoint).
    config = dict(kubelet_config(uniform_reserved([0, 1])), featureGates={"PodLevelResources": True, "PodLevelResourceManagers": True})
    root = write_kubelet_node(str(tmp_path / "n"), two_node_boot(), config=config)
    os.remove(os.path.join(root, "var/lib/kubelet/memory_manager_state"))
    assessment = _probe.probe(HostFiles(root)).assessment
    assert assessment.verdict == "kubelet_config_rejected"
    rejected = [cause.message for cause in assessment.causes if cause.verdict == "kubelet_config_rejected"]
    assert rejected and "PodLevelResourceManagers" in rejected[0] and "1.34, 1.35 refuse" in rejected[0]
    assert not assessment.repairable


@pytest.mark.parametrize(
    "spelling, rejected",
    [("1.5Gi", True), ("1.0Gi", True), ("0.5Gi", True), ("1536Mi", False), ("1.Gi", False), ("1610612736", False),
     ("1.5G", False), ("1610612736000m", True), ("1.610612736e9", False)],
)
def test_reserved_memory_kubelet_cannot_convert_to_int64_is_rejected(tmp_path, spelling, rejected):
    # memory_manager.go convertReserved: Quantity.AsInt64 fails for a quantity held as inf.Dec or with a negative scale.
    size = parse_quantity(spelling)
    reserved = {0: {"memory": size}, 1: {"memory": GIB}}
    config = kubelet_config(reserved)
    config["reservedMemory"][0]["limits"]["memory"] = spelling
    result = probe(tmp_path, two_node_boot(), reserved=reserved, config=config)
    if rejected:
        assert result.assessment.verdict == "kubelet_config_rejected"
        assert result.assessment.causes_for("kubelet_config_rejected") == [
            'could not covert a variable of type Quantity to int64 (reservedMemory NUMA node 0 memory: "%s" is not a '
            "whole number kubelet can keep as an int64; write it without a fraction, e.g. in Mi or Ki) (reservedMemory "
            "from /var/lib/kubelet/config.yaml)" % spelling
        ]
    else:
        assert result.assessment.verdict == "in_sync", result.assessment.causes


def test_static_policy_without_any_reservation_is_rejected(tmp_path):
    # validateReservedMemory: nothing reserved but the default evictionHard memory.available (100Mi) is.
    config = {"memoryManagerPolicy": "Static"}
    result = probe(tmp_path, two_node_boot(), config=config)
    assert result.assessment.verdict == "kubelet_config_rejected"
    assert [m.split(" (")[0] for m in result.assessment.causes_for("kubelet_config_rejected")] == [
        'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature',
        "[memorymanager] you should specify the system reserved memory",
    ]


def test_eviction_percentage_of_capacity_counts_in_the_reservation(tmp_path):
    # hardEvictionReservation: float32 percentage of the node's memory capacity (MemTotal of /proc/meminfo).
    before = two_node_boot()
    capacity = sum(before.mem_total_kb.values()) * KIB
    eviction = int(float(capacity) * float(_float32(_float32(5.0) / 100)))
    reserved = {0: {"memory": GIB}, 1: {"memory": GIB + eviction}}
    config = kubelet_config(reserved)
    config["systemReserved"] = {"memory": str(2 * GIB)}
    config["evictionHard"] = {"memory.available": "5%"}
    assert probe(tmp_path / "a", before, reserved=reserved, config=config).assessment.verdict == "in_sync"
    config["evictionHard"] = {"memory.available": "6%"}
    assert probe(tmp_path / "b", before, reserved=reserved, config=config).assessment.verdict == "kubelet_config_rejected"


def test_hugepages_in_system_reserved_are_rejected_by_kubelet(tmp_path):
    # cmd/kubelet/app/server.go parseResourceList: "cannot reserve" anything but cpu, memory, ephemeral-storage, pid.
    before = Boot({0: 8 * GIB // KIB}, {0: {HUGEPAGE_2M_KB: 64}})
    reserved = {0: {"memory": GIB, "hugepages-2Mi": 64 * MIB}}
    result = probe(tmp_path, before, reserved=reserved, config=kubelet_config(reserved))
    assert result.assessment.verdict == "kubelet_config_rejected"
    messages = result.assessment.causes_for("kubelet_config_rejected")
    assert messages[0].startswith('kubelet config: systemReserved value failed to parse: cannot reserve "hugepages-2Mi" resource')


def test_a_reservation_larger_than_its_numa_node_is_what_kubelet_starts_with(tmp_path):
    # policy_static.go getDefaultMachineState: allocatable = total - reserved in uint64, no check; validateReservedMemory
    # only compares sums with Node Allocatable. Kubelet starts and records the wrapped numbers.
    before = Boot({0: 2 * GIB // KIB, 1: 64 * GIB // KIB})
    reserved = {0: {"memory": 3 * GIB}, 1: {"memory": GIB}}
    result = probe(tmp_path / "a", before, reserved=reserved, config=kubelet_config(reserved))
    assert result.assessment.verdict == "in_sync", result.assessment.causes
    recorded = result.assessment.report.content.machine_state[0].memory_map["memory"]
    assert recorded.allocatable == 2 ** 64 - GIB
    # A KASLR move on such a node is judged like any other.
    after = before.moved(node0=-45260, node1=45260)
    moved = probe(tmp_path / "b", before, after, reserved=reserved, config=kubelet_config(reserved))
    assert moved.assessment.verdict == "drift_within_bound", moved.assessment.causes
    assert_plan_is_what_kubelet_writes(moved, after, {}, reserved=reserved)


def test_reservation_larger_than_the_whole_node_is_rejected(tmp_path):
    # node_container_manager_linux.go validateNodeAllocatable: kubelet's container manager refuses it at start.
    before = Boot({0: 2 * GIB // KIB})
    reserved = {0: {"memory": 3 * GIB}}
    result = probe(tmp_path, before, reserved=reserved, config=kubelet_config(reserved))
    assert result.assessment.verdict == "kubelet_config_rejected"
    assert result.assessment.causes_for("kubelet_config_rejected")[0].startswith(
        'invalid Node Allocatable configuration. Resource "memory" has a reservation of 3221225472 but capacity of 2Gi. '
        "Expected capacity >= reservation."
    )


def _shift_within_group(raw, moved, resource="memory"):
    """The same file with ``moved`` bytes of reserved memory on node 1 instead of node 0 (group sums unchanged)."""
    fields = inspect_checkpoint(raw).content
    table0, table1 = fields.machine_state[0].memory_map[resource], fields.machine_state[1].memory_map[resource]
    table0.reserved, table0.free = table0.reserved - moved, table0.free + moved
    table1.reserved, table1.free = table1.reserved + moved, table1.free - moved
    return marshal_for_layout(fields, "legacy")


def test_a_cross_numa_group_is_compared_as_sums_as_kubelet_does(tmp_path):
    # policy_static.go areMachineStatesEqual (1.34-1.37): free and reserved are compared as sums over the stored
    # node's Cells, so kubelet starts when a group's blocks sit on its nodes otherwise than the replay puts them.
    before = two_node_boot(8 * GIB // KIB, 8 * GIB // KIB)
    pods = {"a": {"x": [([0, 1], "memory", 10 * GIB)]}}
    raw = _shift_within_group(recorded_checkpoint(before, uniform_reserved([0, 1]), pods), 2 * GIB)
    result = probe(tmp_path / "a", before, pods=pods, checkpoint_bytes=raw)
    assert result.assessment.verdict == "in_sync", result.assessment.causes
    # The sums themselves must still match: one byte more reserved in the group is refused.
    fields = inspect_checkpoint(raw).content
    fields.machine_state[1].memory_map["memory"].reserved += 1
    fields.machine_state[1].memory_map["memory"].free -= 1
    wrong = probe(tmp_path / "b", before, pods=pods, checkpoint_bytes=marshal_for_layout(fields, "legacy"))
    assert wrong.assessment.verdict == "assignments_do_not_fit"


# --- which kubelet releases start with a file (checkpoint.go / state_checkpoint.go at 1.34-1.37) -------------

_V3_PART = re.compile(rb'"data":"(?:[^"\\]|\\.)*","dataChecksum":[0-9]+')


def test_v3_file_with_an_empty_data_part_is_read_through_its_legacy_part_by_every_release(tmp_path):
    # 1.37 loadAndMigrateCheckpointV3: data "" and dataChecksum 0 fall back to V2/V1; older releases read the inline part.
    before = two_node_boot()
    pods = guaranteed_pods(2, (0,), GIB)
    raw = _V3_PART.sub(b'"data":"","dataChecksum":0', recorded_checkpoint(before, uniform_reserved([0, 1]), pods, "v3"))
    result = probe(tmp_path / "a", before, pods=pods, checkpoint_bytes=raw)
    assert result.assessment.verdict == "in_sync", result.assessment.causes
    assert result.assessment.report.releases_refusing == ()
    after = before.moved(node0=-45260, node1=45260)
    moved = probe(tmp_path / "b", before, after, pods=pods, checkpoint_bytes=raw)
    assert moved.assessment.verdict == "drift_within_bound", moved.assessment.causes
    assert moved.assessment.plan.layout == "legacy"
    assert_plan_is_what_kubelet_writes(moved, after, pods)


@pytest.mark.parametrize(
    "damage, accepting, refusing",
    [
        # 1.34/1.35 verify the legacy checksum only; 1.36 and 1.37 accept 0 "for compatibility with old file backend".
        ("zero-legacy-checksum", "1.36, 1.36 with PodLevelResourceManagers, 1.37", "1.34, 1.35"),
        # 1.34-1.36 read the inline legacy part; 1.37 does not fall back from a damaged data part.
        ("damaged-data", "1.34, 1.35, 1.36, 1.36 with PodLevelResourceManagers", "1.37"),
        # Only 1.36 with the gate off tries the V1-name checksum.
        ("v1-name-checksum", "1.36", "1.34, 1.35, 1.36 with PodLevelResourceManagers, 1.37"),
    ],
)
def test_a_file_the_releases_disagree_about_is_never_rewritten_and_the_releases_are_named(tmp_path, damage, accepting, refusing):
    before = two_node_boot()
    after = before.moved(node0=-45260, node1=45260)  # a drift that would be repaired in a file every release reads
    pods = guaranteed_pods(2, (0,), GIB)
    raw = disagreeing_checkpoint(before, pods, damage)
    result = probe(tmp_path, before, after, pods=pods, checkpoint_bytes=raw)
    assert result.assessment.verdict == "unsupported_layout"
    assert result.assessment.plan is None
    message = result.assessment.causes_for("unsupported_layout")[0]
    assert "kubelet releases disagree about this file: %s accept it, %s refuse it" % (accepting, refusing) in message
    assert ", ".join(result.assessment.report.releases_accepting) == accepting
    facts = assessment_facts(result)
    assert ", ".join(facts["checkpoint"]["releases_refusing"]) == refusing
