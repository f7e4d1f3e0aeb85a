# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet judges, built once per session, and the matrix the run writes to docs/dev/kubelet-versions.md.

A machine without Go fails these tests with the reason (never a skip): kubelet's own code is
the judge of every verdict.
"""

from __future__ import annotations

import collections
import os

import pytest

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build, kubelet_tables, matrix, test_kubelet_judge_releases
from ansible_collections.nodeops.numa_drift.tests.support import corpus
from ansible_collections.nodeops.numa_drift.tests.support.vectors import load_vectors


@pytest.fixture(scope="session")
def judges():
    """``{release: judge binary}`` for every supported release, built one release at a time."""
    try:
        return build.build_all(build.selected_releases())
    except build.JudgeBuildError as error:
        pytest.fail("kubelet judge: %s" % error, pytrace=False)


def pytest_deselected(items):
    matrix.PARTIAL.extend(item.nodeid for item in items if matrix.is_judge_test(item.nodeid))


def _full_run(session) -> bool:
    """Every case of every judge test was collected (no -k, no single file or node id)."""
    wanted = {
        "test_unit_corpus_verdict_is_kubelets": len(corpus.unit_cases()),
        "test_configuration_verdict_is_kubelets": len(corpus.config_cases()),
        "test_checkpoint_vector_verdict_is_kubelets": len(load_vectors()),
        "test_generated_reboot_verdict_is_kubelets": 1,
        "test_sandbox_fleet_verdict_is_kubelets": len(corpus.sandbox_fleet_trees()),
        "test_a_checkpoint_written_by_each_release_is_judged_at_every_release": len(build.RELEASES),
        "test_a_checkpoint_with_assignments_written_by_each_release_is_judged_at_every_release": len(build.RELEASES),
        "test_kubelet_unit_table_verdict_is_kubelets": sum(len(kubelet_tables.layouts(case)) for case in kubelet_tables.table_cases().values()),
        "test_a_node_holding_a_real_kubelet_gets_that_releases_verdict": len(test_kubelet_judge_releases.CASES),
    }
    found = collections.Counter(getattr(item, "originalname", item.name) for item in session.items if matrix.is_judge_test(item.nodeid))
    return all(found[name] == count for name, count in wanted.items())


def pytest_sessionfinish(session, exitstatus):
    """Write the matrix when the whole judge suite ran at every release (a partial run writes nothing)."""
    if matrix.PARTIAL or session.shouldstop or tuple(build.selected_releases()) != build.RELEASES or not _full_run(session):
        return
    doc = os.path.join(build.CHECKOUT, "docs", "dev", "kubelet-versions.md")
    if not matrix.write_doc(doc) and session.exitstatus == 0:
        # The committed matrix must be the one kubelet's code gives for this tree.
        print("\nkubelet judge: %s did not match this run's matrix; it is rewritten: review and commit it" % doc)
        session.exitstatus = 1
