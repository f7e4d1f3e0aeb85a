# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_facts: the modules' numa_drift view of a probe, its summary line and the diff-mode numbers."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts, numbers_text, summary_line
from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, released_node
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import DEFAULT_AUTO_BOUND, KASLR_KB, kaslr_node


def test_the_view_of_a_drifted_node(tmp_path):
    result = _probe.probe(HostFiles(kaslr_node(tmp_path)))
    facts = assessment_facts(result)
    json.dumps(facts)  # plain JSON, as a module returns it
    assert facts["verdict"] == "drift_within_bound" and facts["repairable"] is True
    assert facts["bound_bytes"] == DEFAULT_AUTO_BOUND
    assert {cause["verdict"] for cause in facts["causes"]} == {"drift_within_bound"}
    node0, node1 = facts["nodes"]
    assert node0["memory"]["delta_total"] == -KASLR_KB * 1024 and node1["memory"]["delta_total"] == KASLR_KB * 1024
    assert node0["memory"]["current_total"] - node0["memory"]["recorded_total"] == node0["memory"]["delta_total"]
    assert node0["within_bound"] is True
    assert sorted(node0["hugepages"]) == ["hugepages-1Gi", "hugepages-2Mi"]
    assert node0["hugepages"]["hugepages-1Gi"]["delta_total"] == 0
    assert facts["checkpoint"]["path"] == result.path and facts["checkpoint"]["exists"] is True
    assert facts["kernel_image"]["size"] == 32 * 1024 * 1024
    assert facts["kubelet"]["policy"] == "Static"
    assert facts["node_problems"] == []
    assert facts["summary"] == summary_line(result.assessment)


def test_summary_line(tmp_path):
    assessment = _probe.probe(HostFiles(kaslr_node(tmp_path))).assessment
    line = summary_line(assessment, node_label="worker-1")
    assert line.startswith("worker-1: drift_within_bound; memory node0 -")
    assert ", node1 +" in line
    assert "bound 96 MiB (auto: kernel image span 32 MiB + 64 MiB)" in line
    assert "4 pods/5 containers/" in line and "legacy layout" in line


def test_summary_of_a_refusal_quotes_the_first_cause(tmp_path):
    assessment = _probe.probe(HostFiles(kaslr_node(tmp_path)), drift_bound="off").assessment
    assert assessment.verdict == "drift_exceeds_bound"
    assert summary_line(assessment).endswith(assessment.causes_for("drift_exceeds_bound")[0])


def test_no_checkpoint_view(tmp_path):
    root = kaslr_node(tmp_path, checkpoint_bytes=b"")
    facts = assessment_facts(_probe.probe(HostFiles(root)))
    assert facts["verdict"] == "no_checkpoint"
    assert facts["checkpoint"] == {"path": os.path.join(root, "var/lib/kubelet/memory_manager_state"), "exists": False}
    assert facts["nodes"] == []


def test_numbers_text_one_line_per_known_number(tmp_path):
    facts = assessment_facts(_probe.probe(HostFiles(kaslr_node(tmp_path))))
    recorded = numbers_text(facts["nodes"], "recorded").splitlines()
    current = numbers_text(facts["nodes"], "current").splitlines()
    assert len(recorded) == len(current) == 2 * 3 * 2  # 2 nodes x (memory + 2 hugepage sizes) x (total, allocatable)
    total = facts["nodes"][0]["memory"]["recorded_total"]
    assert recorded[0].startswith("node0.memory.total = %d (" % total)
    assert recorded[0] != current[0]
    assert numbers_text([], "recorded") == "\n"


def _json_types_only(value, where="numa_drift"):
    """The paths in ``value`` holding anything but JSON's own types (dict, list, str, int, float, bool, None)."""
    if isinstance(value, dict):
        return [bad for key, item in value.items() for bad in _json_types_only(item, "%s.%s" % (where, key))]
    if isinstance(value, list):
        return [bad for index, item in enumerate(value) for bad in _json_types_only(item, "%s[%d]" % (where, index))]
    return [] if type(value) in (str, int, float, bool, type(None)) else ["%s: %s" % (where, type(value).__name__)]


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_facts_hold_json_types_only_as_the_controller_stores_them(tmp_path, layout):
    # The action plugin returns these facts from the controller's memory (no JSON between): a ByteQuantity (an int
    # that keeps its spelling) made ansible-core warn "Type 'ByteQuantity' is unsupported in variable storage".
    facts = assessment_facts(_probe.probe(HostFiles(released_node(tmp_path, layout, "v1.35.4"))))
    assert facts["kubelet"]["system_reserved"] or facts["kubelet"]["reserved_memory"]
    assert _json_types_only(facts) == []


def test_the_facts_say_which_kubelet_starts_and_where_that_was_read(tmp_path):
    facts = assessment_facts(_probe.probe(HostFiles(released_node(tmp_path, "k3s", "v1.36.3"))))
    assert (facts["kubelet"]["release"], facts["kubelet"]["version"], facts["kubelet"]["rules_release"]) == ("1.36", "v1.36.3+k3s1", "1.36")
    assert facts["kubelet"]["release_source"] == "/usr/local/bin/k3s --version: k3s version v1.36.3+k3s1 (6b8e1f9c)"
