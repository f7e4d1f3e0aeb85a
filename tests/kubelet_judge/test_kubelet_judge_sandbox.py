# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The sandbox fleet's node trees, judged by kubelet's own code at every release.

``tests/sandbox/fleet.py`` lays out each node of a scenario with ``write_node_tree`` (the same
call ``fleet.py up`` and the demo make, without starting the stand-ins or the API). Every distinct
tree of every scenario is probed (the verdict must be the one the fleet records for it) and judged
as found and, for ``drift_within_bound``, after ``kubelet_mm_checkpoint``'s repair (``judge_tree``).
"""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.tests.support import corpus
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree
from ansible_collections.nodeops.numa_drift.tests.sandbox import fleet


FLEET_TREES = corpus.sandbox_fleet_trees()


def test_every_scenario_and_verdict_of_the_fleet_is_covered():
    judged = list(FLEET_TREES.values())
    for scenario, (build, count, _about) in fleet.SCENARIOS.items():
        for name, plan in build(count):
            assert (name, plan) in judged, "%s/%s is not judged" % (scenario, name)
    verdicts = {plan.expected_verdict for _name, plan in judged}
    assert verdicts == {"drift_within_bound", "in_sync", "no_checkpoint", "drift_exceeds_bound", "hugepages_changed"}
    assert {plan.distribution for _name, plan in judged} >= {None} | set(fleet.distros.SHAPES)


@pytest.mark.parametrize("key", [pytest.param(key, id=key) for key in sorted(FLEET_TREES)])
def test_sandbox_fleet_verdict_is_kubelets(judges, tmp_path, key):
    name, plan = FLEET_TREES[key]
    root = str(tmp_path / "root")
    fleet.write_node_tree(root, plan)
    verdict = _probe.probe(HostFiles(root)).assessment.verdict
    assert verdict == plan.expected_verdict, "%s: the probe says %s, the fleet expects %s" % (key, verdict, plan.expected_verdict)
    problems = judge_tree(judges, "sandbox fleet", key, root, str(tmp_path / "scratch"),
                          describe_tree="%s: %s" % (key, plan.description))
    assert not problems, "\n".join(problems)
