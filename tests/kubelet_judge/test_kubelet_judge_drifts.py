# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Generated reboots (hypothesis), judged by the probe and by kubelet's own code at every release.

A checkpoint written for one boot, a node tree of the next: NUMA node count, sizes, 1 GiB pages,
per-node reservedMemory spelled as people write it (bytes, Ki, Mi, Gi), eviction threshold present
or defaulted, pods on one node or a cross-NUMA group, drifts from a few KiB to real capacity
changes, legacy and 1.37 layouts.
"""

from __future__ import annotations

import tempfile
from typing import Any, Dict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    HUGEPAGE_1G_KB,
    HUGEPAGE_2M_KB,
    KIB,
    MIB,
    Boot,
    write_kubelet_node,
)

DRIFTS_KB = (0, -4, 12, -44, 1024, -45260, 45260, -98304, 200 * 1024, -GIB // KIB)


def spell(size: int, unit: str) -> str:
    """``size`` bytes as a Kubernetes quantity in ``unit`` when it divides, else plain bytes."""
    factor = {"": 1, "Ki": KIB, "Mi": MIB, "Gi": GIB}[unit]
    return "%d%s" % (size // factor, unit) if size % factor == 0 else str(size)


@st.composite
def reboots(draw) -> Dict[str, Any]:
    count = draw(st.integers(1, 3))
    totals = {n: draw(st.integers(4, 32)) * GIB // KIB + draw(st.integers(0, 4096)) * 4 for n in range(count)}
    pages = {n: draw(st.integers(0, 2)) for n in range(count)}
    recorded = Boot(totals, {n: {HUGEPAGE_2M_KB: 0, HUGEPAGE_1G_KB: pages[n]} for n in range(count)})
    current = recorded.moved(**{"node%d" % n: draw(st.sampled_from(DRIFTS_KB)) for n in range(count)})
    reserved = {n: {"memory": draw(st.sampled_from((512 * MIB, GIB, 1536 * MIB)))} for n in range(count)}
    pods: Dict[str, Any] = {}
    for index in range(draw(st.integers(0, 3))):
        group = draw(st.sampled_from([[n] for n in range(count)] + ([list(range(count))] if count > 1 else [])))
        size = draw(st.sampled_from((256 * MIB, GIB, 2 * GIB)))
        pods["pod-%d" % index] = {"c": [(group, "memory", size)]}
    eviction = draw(st.sampled_from((None, 100 * MIB, 200 * MIB)))
    unit = draw(st.sampled_from(("", "Ki", "Mi", "Gi")))
    layout = draw(st.sampled_from(("legacy", "v3")))
    return dict(recorded=recorded, current=current, reserved=reserved, pods=pods, eviction=eviction, unit=unit, layout=layout)


def config_of(case: Dict[str, Any]) -> Dict[str, Any]:
    total = sum(limits["memory"] for limits in case["reserved"].values())
    eviction = case["eviction"] if case["eviction"] is not None else 100 * MIB
    config: Dict[str, Any] = {
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": n, "limits": {"memory": spell(limits["memory"], case["unit"])}}
                           for n, limits in sorted(case["reserved"].items())],
        "systemReserved": {"memory": spell(total - eviction, case["unit"])},
    }
    if case["eviction"] is not None:
        config["evictionHard"] = {"memory.available": spell(eviction, case["unit"])}
    return config


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=reboots())
def test_generated_reboot_verdict_is_kubelets(judges, case):
    with tempfile.TemporaryDirectory() as scratch:
        root = write_kubelet_node(scratch + "/tree", case["recorded"], case["current"], reserved=case["reserved"],
                                  pods=case["pods"], layout=case["layout"], config=config_of(case))
        described = "recorded %s current %s reserved %s pods %s eviction %s unit %r layout %s" % (
            case["recorded"], case["current"].mem_total_kb, case["reserved"], case["pods"], case["eviction"], case["unit"], case["layout"])
        problems = judge_tree(judges, "generated reboots", "hypothesis", root, scratch + "/scratch", describe_tree=described)
        assert not problems, "\n".join(problems)
