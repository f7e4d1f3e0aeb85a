# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kubelet judges, built once per session, and the matrix the run writes to docs/kubelet-versions.md.

A machine without Go fails these tests with the reason (never a skip): kubelet's own code is
the judge of every verdict.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build, corpus, matrix
from ansible_collections.nodeops.numa_drift.tests.unit.vectors import load_vectors


@pytest.fixture(scope="session")
def judges():
    """``{release: judge binary}`` for every supported release, built one release at a time."""
    try:
        return build.build_all()
    except build.JudgeBuildError as error:
        pytest.fail("kubelet judge: %s" % error, pytrace=False)


def pytest_deselected(items):
    matrix.PARTIAL.extend(item.nodeid for item in items if matrix.is_judge_test(item.nodeid))


def pytest_sessionfinish(session, exitstatus):
    """Write the matrix when the whole judge suite ran (a -k or single-test run writes nothing)."""
    ours = [item for item in session.items if matrix.is_judge_test(item.nodeid)]
    if matrix.PARTIAL or session.shouldstop or len(ours) != len(corpus.unit_cases()) + len(load_vectors()) + 1:
        return
    matrix.write_doc(os.path.join(build.CHECKOUT, "docs", "kubelet-versions.md"))
