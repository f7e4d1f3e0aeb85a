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

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import corpus
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree
from ansible_collections.nodeops.numa_drift.tests.unit.vectors import load_vectors

# Disagreements found and not yet fixed in the engine (each listed in the report to the lead):
# case name -> reason. xfail(strict=True): a fix makes the test fail until the entry goes.
KNOWN_UNIT = {
    "layout_v3_data_empty": "kubelet starts at every release with a V3 file whose data part is empty (it reads the inline "
                            "part); we call it unsupported_layout",
    "distribution_rke2": "kubelet defaults evictionHard only when --config names a file: with --config-dir alone there is no "
                         "100Mi eviction reservation and kubelet refuses reservedMemory at every release; we call it drift_within_bound",
    "distribution_k3s": "as distribution_rke2 (--config-dir only; k3s's defaults drop-in sets no memory.available threshold)",
    "distribution_openshift": "--v=${KUBELET_LOG_LEVEL} with the optional env file absent gives --v=, which kubelet refuses "
                              "before anything else; we call it drift_within_bound",
    "distribution_eks-al2": "--pod-infra-container-image is gone from kubelet v1.35: only v1.34 starts after the repair; "
                            "we call it drift_within_bound without naming the releases",
}
KNOWN_VECTORS: dict = {}
KNOWN_CONFIG: dict = {}

UNIT_CASES = corpus.unit_cases()
CONFIG_CASES = corpus.config_cases()
VECTORS = load_vectors()


def _params(names, known):
    return [pytest.param(name, id=name, marks=[pytest.mark.xfail(strict=True, reason=known[name])] if name in known else [])
            for name in names]


@pytest.mark.parametrize("name", _params(sorted(UNIT_CASES), KNOWN_UNIT))
def test_unit_corpus_verdict_is_kubelets(judges, tmp_path, name):
    case = UNIT_CASES[name]
    root = case.build(str(tmp_path / "tree"))
    problems = judge_tree(judges, "unit corpus", name, root, str(tmp_path / "scratch"), case.bound, describe_tree=name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _params([v["name"] for v in VECTORS], KNOWN_VECTORS))
def test_checkpoint_vector_verdict_is_kubelets(judges, tmp_path, name):
    vector = next(v for v in VECTORS if v["name"] == name)
    root = corpus.vector_tree(str(tmp_path / "tree"), vector["content"])
    problems = judge_tree(judges, "checkpoint vectors", name, root, str(tmp_path / "scratch"),
                          describe_tree="vector %r in a tree sized from its own machine state" % name)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", _params(sorted(CONFIG_CASES), KNOWN_CONFIG))
def test_configuration_verdict_is_kubelets(judges, tmp_path, name):
    case = CONFIG_CASES[name]
    root = case.build(str(tmp_path / "tree"))
    problems = judge_tree(judges, "configurations", name, root, str(tmp_path / "scratch"), case.bound, describe_tree=name)
    assert not problems, "\n".join(problems)
