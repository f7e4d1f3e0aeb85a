# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_policy/causes.py: the causes each check finds, builder by builder, on records
(no node tree): the layout, the policy, the node's readings, recorded vs recomputed state, the bound, the
configuration kubelet refuses. How drift.assess orders them into a verdict is test_drift.py."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CheckpointFields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import HugepagePool, KernelImage, NodeFacts, NumaNode
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.causes import (
    Cause,
    NodeDrift,
    _bound_causes,
    _config_rejections,
    _difference_cause,
    _layout_causes,
    _machine,
    _node_reading_causes,
    _policy_causes,
    _sources,
    _state_causes,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.machine_state import StateDifference, expected_machine_state
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    KIB,
    MIB,
    entries_of,
    guaranteed_pods,
    recorded_checkpoint,
    two_node_boot,
    uniform_reserved,
)

RESERVED = uniform_reserved([0, 1])  # 1Gi of memory on each node
KERNEL = KernelImage(0x1000000, 0x3ffffff, 0x3000000, (0,), (0,), None, None)
BOUND = 96 * MIB


def facts_of(boot, problems=None):
    """The NodeFacts sysfs would read for ``boot`` (every pool known unless ``problems`` names the node)."""
    problems = problems or {}
    nodes = tuple(
        NumaNode(node_id, kb * KIB,
                 tuple(HugepagePool(size, count, "hugepages-%s" % ("2Mi" if size == 2048 else "1Gi"), size * KIB * count)
                       for size, count in sorted(boot.pools(node_id).items())),
                 frozenset(), True, tuple(problems.get(node_id, ())))
        for node_id, kb in sorted(boot.mem_total_kb.items()))
    return NodeFacts("/node", nodes, tuple(boot.mem_total_kb), tuple(boot.mem_total_kb), 128 * MIB, None, KERNEL, ())


def settings(policy="Static", reserved=None, problems=(), sources=("/var/lib/kubelet/config.yaml",), **field_sources):
    reserved = RESERVED if reserved is None else reserved
    return KubeletSettings(policy=policy, reserved_memory=reserved, reserved_memory_entries=(), system_reserved={},
                           kube_reserved={}, eviction_hard_memory="100Mi", root_dir="/var/lib/kubelet",
                           config_path="/var/lib/kubelet/config.yaml", field_sources=field_sources, sources=sources,
                           problems=problems)


def recorded(boot, pods=None):
    """The checkpoint fields kubelet recorded during ``boot`` with ``pods`` admitted."""
    entries = entries_of(pods or {})
    state, _issues = expected_machine_state(boot.machine(), RESERVED, entries)
    return CheckpointFields(policy_name="Static", machine_state=state, entries=entries)


def verdicts(causes):
    return [cause.verdict for cause in causes]


# --------------------------------------------------------------------------- records


def test_node_drift_delta_is_current_minus_recorded_where_both_sides_have_it():
    drift = NodeDrift(0, {"memory": (64 * GIB, 63 * GIB)}, {"memory": (64 * GIB - 40 * MIB, 63 * GIB - 40 * MIB)}, True)
    assert drift.delta("memory") == -40 * MIB and drift.delta("memory", 1) == -40 * MIB
    assert drift.delta("hugepages-1Gi") is None
    assert NodeDrift(2, None, {"memory": (1, 1)}, False).delta("memory") is None  # a node only one side has


def test_the_machine_counts_an_unreadable_node_as_zero_bytes():
    # cadvisor getNodeMemInfo reports a node without readable meminfo as 0 bytes, and so does the recomputation.
    boot = two_node_boot(hugepages_1g=2)
    node_facts = facts_of(boot)
    unread = NumaNode(1, None, (HugepagePool(1048576, None, "hugepages-1Gi", None),), frozenset(), True, ("x",))
    machine = _machine(NodeFacts("/", (node_facts.numa_nodes[0], unread), (0, 1), (0, 1), None, None, KERNEL, ()))
    assert machine[0] == boot.machine()[0]
    assert (machine[1].mem_total_bytes, dict(machine[1].hugepage_totals)) == (0, {"hugepages-1Gi": 0})


# --------------------------------------------------------------------------- the layout and the policy


def test_a_file_every_era_loads_and_one_kubelet_writes_has_no_layout_cause():
    raw = recorded_checkpoint(two_node_boot(), RESERVED, {})
    assert _layout_causes(inspect_checkpoint(raw)) == []


def test_a_file_no_era_loads_is_corrupt_naming_the_errors():
    [cause] = _layout_causes(inspect_checkpoint(b'{"policyName":"Static","checksum":1}'))
    assert cause.verdict == "corrupt"
    assert cause.message.startswith("no kubelet era loads the checkpoint: ") and "checkpoint is corrupted" in cause.message


def test_a_file_the_releases_disagree_about_is_an_unsupported_layout():
    text = recorded_checkpoint(two_node_boot(), RESERVED, {}).decode()
    zero = (text[: text.rindex('"checksum":')] + '"checksum":0}').encode()  # 1.34 and 1.35 refuse a zero checksum
    [cause] = _layout_causes(inspect_checkpoint(zero))
    assert cause.verdict == "unsupported_layout" and "checksum is 0" in cause.message


def test_a_policy_change_has_kubelets_text():
    assert _policy_causes(CheckpointFields(policy_name="Static"), settings("Static")) == []
    # memorymanager/state/state_checkpoint.go restoreState
    assert _policy_causes(CheckpointFields(policy_name="None"), settings("Static")) == [Cause(
        "policy_mismatch", '[memorymanager] configured policy "Static" differs from state checkpoint policy "None"')]


# --------------------------------------------------------------------------- the node's readings


def test_a_node_whose_memory_cannot_be_read_is_a_topology_change_never_zero():
    boot = two_node_boot()
    good = facts_of(boot)
    unread = NumaNode(1, None, (), frozenset(), True, ("node1/meminfo: MemTotal missing",))
    node_facts = NodeFacts("/node", (good.numa_nodes[0], unread), (0, 1), (0, 1), None, None, KERNEL, ())
    assert _node_reading_causes(node_facts) == [Cause("topology_changed", "node 1: node1/meminfo: MemTotal missing")]
    silent = NumaNode(1, None, (), frozenset(), True, ())
    assert _node_reading_causes(NodeFacts("/node", (silent,), (1,), (1,), None, None, KERNEL, ())) == [
        Cause("topology_changed", "node 1: MemTotal unknown")]


def test_an_unreadable_hugepage_pool_is_a_hugepages_change():
    pool = HugepagePool(1048576, None, "hugepages-1Gi", None)
    node = NumaNode(0, 64 * GIB, (pool,), frozenset(), True, ("nr_hugepages: not a number",))
    assert _node_reading_causes(NodeFacts("/n", (node,), (0,), (0,), None, None, KERNEL, ())) == [
        Cause("hugepages_changed", "node 0: nr_hugepages: not a number")]


def test_no_numa_node_at_all_names_the_root_and_the_problems():
    empty = NodeFacts("/host", (), None, None, None, None, KERNEL, ("/sys/devices/system/node: missing",))
    assert _node_reading_causes(empty) == [
        Cause("topology_changed", "no NUMA node is readable under /host: /sys/devices/system/node: missing")]
    assert _node_reading_causes(facts_of(two_node_boot())) == []


# --------------------------------------------------------------------------- recorded vs recomputed


@pytest.mark.parametrize("kind, resource, drifted, verdict", [
    ("node_set", None, False, "topology_changed"),
    ("resources", None, False, "topology_changed"),
    ("system_reserved", "memory", False, "reserved_changed"),
    ("total", "hugepages-1Gi", False, "hugepages_changed"),
    ("allocatable", "hugepages-2Mi", True, "hugepages_changed"),
    ("total", "memory", False, None),  # judged against the bound
    ("allocatable", "memory", True, None),
    ("free", "memory", True, None),  # recomputed from the blocks by the repair (KEP-6232 does not compare them)
    ("free", "memory", False, "assignments_do_not_fit"),  # without a memory drift, free must match exactly
    ("reserved", "hugepages-1Gi", True, "assignments_do_not_fit"),
    ("cells", None, False, "assignments_do_not_fit"),
])
def test_each_difference_kubelet_finds_is_the_cause_of_one_verdict(kind, resource, drifted, verdict):
    cause = _difference_cause(StateDifference(kind, 0, resource, 1, 2, "log line"), drifted)
    assert (cause.verdict if cause else None) == verdict


def test_a_difference_says_where_what_and_kubelets_log_line():
    cause = _difference_cause(StateDifference("system_reserved", 1, "memory", 1024, 2048, "systemReserved differs"), False)
    assert cause == Cause("reserved_changed", "node 1 memory: system_reserved recorded 1024, now 2048 (systemReserved differs)")
    cause = _difference_cause(StateDifference("cells", 0, None, [0], [0, 1], "cells differ"), False)
    assert cause.message == "node 0: cells recorded [0], now [0, 1] (cells differ): the recorded assignments do not match the blocks"


def test_the_bound_judges_each_nonzero_memory_move():
    nodes = (NodeDrift(0, {"memory": (100 * MIB, 90 * MIB)}, {"memory": (60 * MIB, 50 * MIB)}, True),
             NodeDrift(1, {"memory": (100 * MIB, 90 * MIB)}, {"memory": (100 * MIB, 90 * MIB)}, False))
    assert verdicts(_bound_causes(nodes, 40 * MIB, "auto")) == ["drift_within_bound", "drift_within_bound"]  # |delta| == bound
    causes = _bound_causes(nodes, 40 * MIB - 1, "explicit")
    assert causes[0] == Cause("drift_exceeds_bound", "node 0 memory total moved by -40 MiB (-41943040 bytes), more than the "
                                                     "bound of 41943039 bytes (explicit)")
    assert [cause.message.split(" moved")[0] for cause in causes] == ["node 0 memory total", "node 0 memory allocatable"]
    assert _bound_causes(nodes, None, "/proc/iomem is zeroed") == [
        Cause("bound_unknown", "node 0 memory total moved by -40 MiB (-41943040 bytes); no bound: /proc/iomem is zeroed"),
        Cause("bound_unknown", "node 0 memory allocatable moved by -40 MiB (-41943040 bytes); no bound: /proc/iomem is zeroed")]


def test_state_causes_of_a_kaslr_move_are_within_the_bound_and_give_the_recomputed_state():
    before = two_node_boot()
    after = before.moved(node0=-40 * MIB // KIB, node1=40 * MIB // KIB)
    content = recorded(before, guaranteed_pods(2, (0,)))
    causes, expected, nodes = _state_causes(content, facts_of(after), settings(), BOUND, "auto")
    assert set(verdicts(causes)) == {"drift_within_bound"} and len(causes) == 4  # total and allocatable of two nodes
    assert expected == expected_machine_state(after.machine(), RESERVED, content.entries)[0]
    assert [(drift.node, drift.delta("memory"), drift.holds_kernel_image) for drift in nodes] == [(0, -40 * MIB, True), (1, 40 * MIB, False)]


def test_state_causes_of_an_unchanged_machine_are_in_sync():
    boot = two_node_boot()
    causes, _expected, _nodes = _state_causes(recorded(boot, guaranteed_pods(1)), facts_of(boot), settings(), BOUND, "auto")
    assert causes == [Cause("in_sync", "the recorded machine state equals the recomputed one")]


def test_an_empty_machine_state_is_in_sync_only_without_assignments():
    # policy_static.go validateState: an empty state is re-initialised, unless there are assignments.
    boot = two_node_boot()
    empty = CheckpointFields(policy_name="Static", machine_state={})
    assert verdicts(_state_causes(empty, facts_of(boot), settings(), BOUND, "auto")[0]) == ["in_sync"]
    with_entries = CheckpointFields(policy_name="Static", machine_state={}, entries=recorded(boot, guaranteed_pods(1)).entries)
    assert _state_causes(with_entries, facts_of(boot), settings(), BOUND, "auto")[0] == [Cause(
        "assignments_do_not_fit", "[memorymanager] machine state can not be empty when it has memory assignments")]


def test_changed_reservations_are_reserved_changed():
    boot = two_node_boot()
    twice = {node: {"memory": 2 * GIB} for node in (0, 1)}
    causes, _expected, _nodes = _state_causes(recorded(boot), facts_of(boot), settings(reserved=twice), BOUND, "auto")
    assert "reserved_changed" in verdicts(causes) and "in_sync" not in verdicts(causes)


# --------------------------------------------------------------------------- the configuration kubelet refuses


def test_sources_name_each_field_to_fix_and_where_it_was_set():
    configured = settings(reserved_memory="/var/lib/kubelet/config.yaml")
    assert _sources(configured, ("reserved_memory", "system_reserved")) == (
        "reservedMemory from /var/lib/kubelet/config.yaml; systemReserved from default")


def test_config_rejections_are_settings_problems_then_kubelets_start_up_checks():
    node_facts = facts_of(two_node_boot())
    refused = settings(policy="static", problems=("kubelet config: systemReserved must be a mapping",))
    causes = _config_rejections(node_facts, refused)
    assert causes == [
        Cause("kubelet_config_rejected", "kubelet config: systemReserved must be a mapping (kubelet configuration read from "
                                         "/var/lib/kubelet/config.yaml)"),
        Cause("kubelet_config_rejected", 'unknown policy: "static" (memoryManagerPolicy from default)'),
    ]
    # Without a NUMA node the start-up checks cannot be made; the settings' own problems still are causes.
    no_nodes = NodeFacts("/n", (), None, None, None, None, KERNEL, ())
    assert verdicts(_config_rejections(no_nodes, refused)) == ["kubelet_config_rejected"]
    # Static with nothing reserved: validateReservedMemory (0 against the 100Mi eviction threshold), then NewPolicyStatic.
    assert _config_rejections(node_facts, settings(reserved={})) == [
        Cause("kubelet_config_rejected", 'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by '
                                         "Node Allocatable feature (reservedMemory from default; systemReserved from default; "
                                         "kubeReserved from default; evictionHard from default)"),
        Cause("kubelet_config_rejected", "[memorymanager] you should specify the system reserved memory (reservedMemory from default)"),
    ]
