# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verdicts at the release of the kubelet that will start: removed flags, the checkpoint each release reads and the
repair written for it, an upgrade across the drifted reboot, releases outside the tested ones.

Where kubelet's own code decides (tests/kubelet_judge) these cases are judged too; here they pin our words."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checkpoint import inspect_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy import drift
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.tests.support.distributions import PAUSE_IMAGE_FILES, VERSIONS, released_node, with_pause_image
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    GIB,
    disagreeing_checkpoint,
    guaranteed_pods,
    recorded_checkpoint,
    tree_snapshot,
    two_node_boot,
    uniform_reserved,
    write_kubelet_node,
)
from ansible_collections.nodeops.numa_drift.tests.support.programs import install_release


@pytest.mark.parametrize("layout", sorted(PAUSE_IMAGE_FILES))
def test_a_1_34_node_with_the_pause_image_flag_and_benign_drift_is_repaired(tmp_path, layout):
    root = released_node(tmp_path, layout, "v1.34.4", with_pause_image(layout))
    result = _probe.probe(HostFiles(root))
    assert result.settings.release.version == "v1.34.4"
    assert result.assessment.verdict == "drift_within_bound", result.assessment.causes
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"))
    assert outcome.action == "repaired" and outcome.verdict_after == "in_sync"


@pytest.mark.parametrize("version", VERSIONS[1:])
@pytest.mark.parametrize("layout", sorted(PAUSE_IMAGE_FILES))
def test_a_1_35_or_later_node_with_the_pause_image_flag_gets_its_releases_refusal_naming_the_file(tmp_path, layout, version):
    root = released_node(tmp_path, layout, version, with_pause_image(layout))
    before = tree_snapshot(root)
    result = _probe.probe(HostFiles(root))
    assessment = result.assessment
    assert assessment.verdict == "kubelet_config_rejected"
    [message] = assessment.causes_for("kubelet_config_rejected")
    assert message.startswith("kubelet flags: failed to parse kubelet flag: unknown flag: --pod-infra-container-image (kubelet %s has no "
                              "such flag since 1.35; remove it where it is set: " % version)
    assert re.search(r"from %s:\d+\)" % re.escape(PAUSE_IMAGE_FILES[layout]), message), message
    assert "releases disagree" not in message
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"))
    assert outcome.changed is False and tree_snapshot(root) == before


@pytest.mark.parametrize("layout", sorted(PAUSE_IMAGE_FILES))
def test_with_the_release_unknown_the_flag_stays_the_survey_of_releases(tmp_path, layout):
    from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, drifted_node  # pylint: disable=import-outside-toplevel

    root = drifted_node(tmp_path, with_pause_image(layout), kubelet_root_dir=LAYOUTS[layout][3])
    result = _probe.probe(HostFiles(root))
    assert result.settings.release.known is False and result.settings.release.source.startswith("unknown: ")
    [message] = result.assessment.causes_for("kubelet_config_rejected")
    assert "kubelet releases disagree: 1.34 accept it, 1.35, 1.36, 1.37 refuse to start with it" in message


@pytest.mark.parametrize("version, why", [("v1.38.0", "outside the releases"), ("v1.33.4", "outside the releases"),
                                          ("v1.37.0-rc.1", "a pre-release"), ("v1.35.0-alpha.0", "a pre-release")])
def test_a_release_outside_the_tested_ones_is_refused_by_name_and_nothing_is_written(tmp_path, version, why):
    root = released_node(tmp_path, "kubespray", version)
    before = tree_snapshot(root)
    result = _probe.probe(HostFiles(root))
    assert result.assessment.verdict == "kubelet_release_untested" and not result.assessment.repairable
    [message] = result.assessment.causes_for("kubelet_release_untested")
    assert message.startswith("kubelet %s (/usr/local/bin/kubelet --version: Kubernetes %s) is %s (1.34 to 1.37 are tested): "
                              "nothing is written" % (version, version, why))
    # What the file would meet is still said (the drift, within the bound).
    assert result.assessment.causes_for("drift_within_bound")
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"))
    assert outcome.changed is False and tree_snapshot(root) == before


@pytest.mark.parametrize("version, nearest", [("v1.38.0", "1.37"), ("v1.33.4", "1.34"), ("v1.35.0-rc.1", "1.35")])
def test_untested_release_nearest_judges_by_the_nearest_tested_release(tmp_path, version, nearest):
    root = released_node(tmp_path, "kubeadm-flags", version, with_pause_image("kubeadm-flags"))
    result = _probe.probe(HostFiles(root), untested_release="nearest")
    assert result.settings.rules_release.release == nearest
    expected = "drift_within_bound" if nearest == "1.34" else "kubelet_config_rejected"  # the pause-image flag
    assert result.assessment.verdict == expected, result.assessment.causes


# --- the checkpoint the starting release reads, and the repair written for it ----------------------------------


# (damage, release) -> what that release does with it (test_drift names the same readings per era).
READS = {
    "zero-legacy-checksum": {"v1.34.4": False, "v1.35.4": False, "v1.36.3": True, "v1.37.2": True},
    "damaged-data": {"v1.34.4": True, "v1.35.4": True, "v1.36.3": True, "v1.37.2": False},
    "v1-name-checksum": {"v1.34.4": False, "v1.35.4": False, "v1.36.3": True, "v1.37.2": False},
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("damage", sorted(READS))
def test_a_file_releases_disagree_about_is_judged_by_the_release_that_starts(tmp_path, damage, version):
    before, pods = two_node_boot(), guaranteed_pods(2, (0,), GIB)
    raw = disagreeing_checkpoint(before, pods, damage)
    after = before.moved(node0=-45260, node1=45260)
    root = write_kubelet_node(str(tmp_path / "node"), before, after, pods=pods, checkpoint_bytes=raw)
    install_release(root, "kubeadm", version)
    result = _probe.probe(HostFiles(root))
    assessment = result.assessment
    if READS[damage][version]:
        assert assessment.verdict == "drift_within_bound", assessment.causes
        plan = assessment.plan
        # The repair is the state this release restores, in a layout every era reads with checksums that verify.
        assert plan.layout == "legacy"
        assert drift.verify_written(plan.content, plan) == []
        assert plan.fields.entries == inspect_checkpoint(raw).inline.entries  # every assignment kept
        shown = assessment_facts(result)["checkpoint"]  # the facts say what this release reads and what is written
        assert (shown["write_layout"], shown["pods"]) == (plan.layout, len(plan.fields.entries))
        outcome = repair_node(result, backup_dir=str(tmp_path / "backups"))
        assert outcome.action == "repaired" and outcome.verdict_after == "in_sync"
    else:
        assert assessment.verdict == "corrupt"
        [message] = assessment.causes_for("corrupt")
        assert message.startswith("kubelet %s does not load the checkpoint: " % version)
        assert "releases disagree" not in message


def test_an_upgrade_across_the_drifted_reboot_is_repaired_for_the_kubelet_that_starts(tmp_path):
    # Drain, upgrade the kubelet package, reboot: 1.34 wrote the checkpoint, 1.37 reads it after a KASLR move.
    before = two_node_boot()
    after = before.moved(node0=-45260, node1=45260)
    pods = guaranteed_pods(3, (0, 1), GIB)
    root = write_kubelet_node(str(tmp_path / "node"), before, after, pods=pods, layout="legacy")
    install_release(root, "kubeadm", "v1.37.2")
    result = _probe.probe(HostFiles(root))
    assert (result.settings.release.version, result.assessment.verdict) == ("v1.37.2", "drift_within_bound")
    plan = result.assessment.plan
    assert plan.layout == "legacy" and plan.content == recorded_checkpoint(after, uniform_reserved([0, 1]), pods, "legacy")
    # And a 1.37 file read by a 1.34 kubelet after a downgrade keeps 1.37's layout (both parts from the same state).
    root = write_kubelet_node(str(tmp_path / "down"), before, after, pods=pods, layout="v3")
    install_release(root, "kubeadm", "v1.34.4")
    down = _probe.probe(HostFiles(root))
    assert (down.assessment.verdict, down.assessment.plan.layout) == ("drift_within_bound", "v3")
    assert down.assessment.plan.content == recorded_checkpoint(after, uniform_reserved([0, 1]), pods, "v3")


def test_the_gate_that_picks_1_36s_reader_is_read_from_the_nodes_own_configuration(tmp_path):
    # 1.36 reads the V1-name checksum only with PodLevelResourceManagers off: on, the same file is corrupt for it.
    before, pods = two_node_boot(), guaranteed_pods(2, (0,), GIB)
    raw = disagreeing_checkpoint(before, pods, "v1-name-checksum")
    after = before.moved(node0=-45260, node1=45260)
    from ansible_collections.nodeops.numa_drift.tests.support.scenario import kubelet_config  # pylint: disable=import-outside-toplevel

    config = dict(kubelet_config(uniform_reserved([0, 1])), featureGates={"PodLevelResources": True, "PodLevelResourceManagers": True})
    root = write_kubelet_node(str(tmp_path / "node"), before, after, pods=pods, checkpoint_bytes=raw, config=config)
    install_release(root, "kubeadm", "v1.36.3")
    result = _probe.probe(HostFiles(root))
    assert result.assessment.verdict == "corrupt"
    assert result.assessment.causes_for("corrupt")[0].startswith("kubelet v1.36.3 does not load the checkpoint: ")
    assert os.path.exists(result.path)


# --- kubelet's decoder reads past what it did not write ----------------------------------------------------------


@pytest.mark.parametrize("edit", [(b'{"policyName"', b'{"extra":1,"policyName"'), (b'"numaAffinity"', b'"spare":[0],"numaAffinity"')])
def test_a_field_kubelet_did_not_write_leaves_an_in_sync_file_in_sync_and_a_drifted_one_unwritten(tmp_path, edit):
    before, pods = two_node_boot(), guaranteed_pods(2, (0,), GIB)
    raw = recorded_checkpoint(before, uniform_reserved([0, 1]), pods).replace(edit[0], edit[1], 1)
    synced = write_kubelet_node(str(tmp_path / "synced"), before, pods=pods, checkpoint_bytes=raw)
    assert _probe.probe(HostFiles(synced), kubelet_release="1.34").assessment.verdict == "in_sync"  # kubelet starts
    drifted = write_kubelet_node(str(tmp_path / "drifted"), before, before.moved(node0=-45260, node1=45260), pods=pods, checkpoint_bytes=raw)
    files = tree_snapshot(drifted)
    result = _probe.probe(HostFiles(drifted), kubelet_release="1.37")
    assert result.assessment.verdict == "unsupported_layout" and result.assessment.plan is None
    assert result.assessment.causes_for("unsupported_layout")[0].startswith("the file is not kubelet output: ")
    assert result.assessment.causes_for("drift_within_bound")  # what kubelet meets is still said
    assert repair_node(result, backup_dir=str(tmp_path / "backups")).changed is False and tree_snapshot(drifted) == files
