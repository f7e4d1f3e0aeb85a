# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's own memory-manager unit-test tables as node trees (kubelet_tables.py), judged at every release.

Each tree is judged like every other corpus (``judge_tree``: our verdict against kubelet at every
release, the repair of ``drift_within_bound`` started by every release, a refused file left
byte-identical). The translation itself is checked too: at the releases whose test file holds the
case, kubelet does with the tree what the table says (starts and holds the test's expected machine
state, or refuses with the test's error).
"""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build, kubelet_tables
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import _normal, judge_tree
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import judge

TABLE_CASES = kubelet_tables.table_cases()


def table_params():
    return [pytest.param(name, layout, id="%s/%s" % (name, layout))
            for name in sorted(TABLE_CASES) for layout in kubelet_tables.layouts(TABLE_CASES[name])]


def test_every_translated_case_names_its_test_and_releases():
    for name, case in TABLE_CASES.items():
        assert case.test.startswith("Test") and case.case and set(case.releases) <= set(build.RELEASES), name
        assert (case.state is None) or (case.content is None), name
    counts = {}
    for case in TABLE_CASES.values():
        if case.moved_kb:
            continue  # derived from a table's case, not one of its own
        for release in case.releases:
            counts[(case.test, release)] = counts.get((case.test, release), 0) + 1
    # The size of each table at each release (kubelet's test files; the docstring of kubelet_tables.py).
    for release in build.RELEASES:
        assert counts[("TestStaticPolicyStart", release)] == 15
        assert counts[("TestNewManager", release)] == 5
        assert counts[("TestValidateReservedMemory", release)] == 8
    assert [counts[("TestCheckpointStateRestore", release)] for release in build.RELEASES] == [4, 4, 10, 18]
    assert sorted(name for name, case in TABLE_CASES.items() if case.moved_kb) == [
        "TestStaticPolicyStart/should validate cross NUMA reserved memory vs container assignments, then a KASLR reboot",
        "TestStaticPolicyStart/should validate the totalFree and totalReserved size for a resource within a group, then a KASLR reboot",
    ]


@pytest.mark.parametrize("name, layout", table_params())
def test_kubelet_unit_table_verdict_is_kubelets(judges, tmp_path, name, layout):
    case = TABLE_CASES[name]
    root = kubelet_tables.build(str(tmp_path / "tree"), case, layout)
    described = "%s / %s (%s)%s" % (case.test, case.case, layout, ": " + case.note if case.note else "")
    problems = judge_tree(judges, "kubelet's unit-test tables", "%s/%s" % (name, layout), root, str(tmp_path / "scratch"),
                          describe_tree=described)
    for release in case.releases if not case.moved_kb else ():
        if release not in judges:
            continue
        seen = judge(judges[release], root)
        if case.expect is None and not seen.started:
            problems.append("translation: %s should start (the test expects success), %s" % (release, seen.brief()))
        elif case.expect is not None and (seen.started or case.expect not in seen.error):
            problems.append("translation: %s should refuse with %r, %s" % (release, case.expect, seen.brief()))
        elif case.held is not None and _normal((seen.state or {}).get("machineState")) != _normal(case.held):
            problems.append("translation: %s holds %s, the test expects %s" % (release, seen.state, case.held))
    assert not problems, "\n".join(problems)
