# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every verdict of the unit corpus and every kubelet checkpoint vector, judged by kubelet's own code.

Nothing-to-do verdicts: kubelet starts as is; refusing verdicts: kubelet refuses as is;
``drift_within_bound``: kubelet refuses as is and starts, at every release, with the file
``kubelet_mm_checkpoint`` wrote, holding exactly the state we wrote.
"""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.tests.support import corpus
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree
from ansible_collections.nodeops.numa_drift.tests.support.vectors import load_vectors


UNIT_CASES = corpus.unit_cases()
CONFIG_CASES = corpus.config_cases()
VECTORS = load_vectors()


def _params(names):
    return [pytest.param(name, id=name) for name in names]


@pytest.mark.parametrize("name", _params(sorted(UNIT_CASES)))
def test_unit_corpus_verdict_is_kubelets(judges, tmp_path, name):
    case = UNIT_CASES[name]
    root = case.build(str(tmp_path / "tree"))
    problems = judge_tree(judges, "unit corpus", name, root, str(tmp_path / "scratch"), case.bound, describe_tree=name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _params([v["name"] for v in VECTORS]))
def test_checkpoint_vector_verdict_is_kubelets(judges, tmp_path, name):
    vector = next(v for v in VECTORS if v["name"] == name)
    root = corpus.vector_tree(str(tmp_path / "tree"), vector["content"])
    problems = judge_tree(judges, "checkpoint vectors", name, root, str(tmp_path / "scratch"),
                          describe_tree="vector %r in a tree sized from its own machine state" % name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _params(sorted(CONFIG_CASES)))
def test_configuration_verdict_is_kubelets(judges, tmp_path, name):
    case = CONFIG_CASES[name]
    root = case.build(str(tmp_path / "tree"))
    problems = judge_tree(judges, "configurations", name, root, str(tmp_path / "scratch"), case.bound, describe_tree=name)
    assert not problems, "\n".join(problems)
