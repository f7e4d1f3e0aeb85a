# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node trees holding a real, version-stamped kubelet where their unit runs it, judged by kubelet's own code.

The kubelet binaries are the guests' (tests/vm/kubelet_disk.py: ``go build -trimpath`` of
``k8s.io/kubernetes/cmd/kubelet`` at v1.34.4 and v1.37.2, the release stamped as kubelet's own build stamps it): the
probe asks the binary, as on a node, and must give that release's verdict. kubeadm's, EKS AL2's and Kubespray's
layouts, with and without the pause-image flag kubelet 1.35 removed: a 1.34 node with it and benign drift is
repaired and starts; a 1.37 node with it gets the flag verdict naming the file, kubelet 1.37 refuses it too. The
release the probe reads from each binary without running it is the one the binary prints when run.
"""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles, run_version
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.stamp import stamped_release
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import parse_release
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.checks import judge_tree
from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, PAUSE_IMAGE_FILES, drifted_node, with_pause_image
from ansible_collections.nodeops.numa_drift.tests.support.programs import PROGRAMS, REAL_KUBELET_VERSIONS, install_real_kubelet, real_kubelets

CASES = [(layout, version, pause_image) for layout in sorted(PAUSE_IMAGE_FILES) for version in REAL_KUBELET_VERSIONS
         for pause_image in (False, True)]
EXPECTED = {
    ("v1.34.4", False): "drift_within_bound",
    ("v1.34.4", True): "drift_within_bound",  # 1.34 still has --pod-infra-container-image
    ("v1.37.2", False): "drift_within_bound",
    ("v1.37.2", True): "kubelet_config_rejected",
}


@pytest.fixture(scope="session")
def kubelets():
    """``{version: binary}`` of the real kubelets (built once, cached with the guests' disk)."""
    try:
        return real_kubelets()
    except Exception as error:  # pylint: disable=broad-except  # a build failure fails the tests with its reason
        pytest.fail("the real kubelet binaries could not be built: %s" % error, pytrace=False)


@pytest.mark.parametrize("layout, version, pause_image",
                         [pytest.param(*case, id="%s-%s%s" % (case[0], case[1], "-pause-image" if case[2] else "")) for case in CASES])
def test_a_node_holding_a_real_kubelet_gets_that_releases_verdict(judges, kubelets, tmp_path, layout, version, pause_image):
    files, _distribution, _service, root_dir = LAYOUTS[layout]
    root = drifted_node(tmp_path / "tree", with_pause_image(layout) if pause_image else files, kubelet_root_dir=root_dir)
    install_real_kubelet(root, PROGRAMS[layout], kubelets[version])
    result = _probe.probe(HostFiles(root))
    # The release read from the binary itself (release binaries carry it only in their stamped version variables).
    assert result.settings.release.version == version
    assert result.settings.release.source == "%s: %s, stamped in the binary (read without running it)" % (PROGRAMS[layout], version)
    assert result.assessment.verdict == EXPECTED[(version, pause_image)], result.assessment.causes
    if result.assessment.verdict == "kubelet_config_rejected":
        [message] = result.assessment.causes_for("kubelet_config_rejected")
        assert "unknown flag: --pod-infra-container-image (kubelet %s has no such flag since 1.35" % version in message
        assert PAUSE_IMAGE_FILES[layout] in message and "releases disagree" not in message
    problems = judge_tree(judges, "real kubelet binaries", "%s %s" % (layout, version), root, str(tmp_path / "scratch"),
                          describe_tree="%s with kubelet %s%s" % (layout, version, " and the pause-image flag" if pause_image else ""))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", REAL_KUBELET_VERSIONS)
def test_the_release_read_from_a_real_kubelet_is_the_one_it_says_when_run(kubelets, version):
    # The probe reads the stamped variable instead of running kubelet (_golang.stamp): it must be what --version prints.
    said = run_version(kubelets[version], ("--version",))
    assert said["rc"] == 0 and said["output"] == "Kubernetes %s" % version, said
    assert stamped_release(kubelets[version]) == parse_release(said["output"])[0] == version
