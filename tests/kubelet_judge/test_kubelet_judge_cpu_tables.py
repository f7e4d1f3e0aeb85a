# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's own CPU-manager unit-test tables as node trees (kubelet_cpu_tables.py), judged at the releases whose test
file holds each case (issue 38, item 5).

- The translation: kubelet's own CPU manager (``judge_cpu``) does with the tree what the Go test expects: it starts, or
  refuses with the test's error; where the test says what state kubelet then holds (``expCSet``, ``expectedState``),
  the file kubelet leaves holds it.
- The probe: ``probe(HostFiles(root), kubelet_release=...)`` says what kubelet does: the same start, the same stage and,
  where the probe models kubelet's words, the same error text. Where the probe says it does not model the case, the
  node is at least not repairable. Every verdict but ``cpu_default_set_stale`` leaves every file byte-identical under
  ``repair_node``; a ``cpu_default_set_stale`` repair gives a file kubelet starts with and leaves as written.
- The checksum vectors of the tables (v2 checksums, v4 data checksums) are the collection's checksum functions'.
"""

from __future__ import annotations

import json
from typing import Dict

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import accepted_checksums, data_checksum, struct_field, v2_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build, kubelet_cpu_tables
from ansible_collections.nodeops.numa_drift.tests.kubelet_judge.judge import judge_cpu
from ansible_collections.nodeops.numa_drift.tests.support import cputree
from ansible_collections.nodeops.numa_drift.tests.support.cputree import cpu_list, parse_cpu_list
from ansible_collections.nodeops.numa_drift.tests.support.scenario import tree_snapshot

TABLE_CASES = kubelet_cpu_tables.table_cases()
STALE = "cpu_default_set_stale"
# What the probe says of a case it does not model (its class, or its start's stage).
UNMODELLED_CLASSES = ("unknown", "unsupported_layout")
# Where kubelet's error quotes Go's encoding/json, the probe does not model those words: the
# rest of kubelet's text (before them, and from ", please drain" on) must still be the probe's.
GO_LIBRARY_WORDS = ("unexpected end of JSON input", "json: cannot unmarshal")
DRAIN = ", please drain"


def same_words(kubelet_error: str, ours: str) -> bool:
    """The probe's error is kubelet's, but for the words of Go's standard library kubelet quotes."""
    quoted = [kubelet_error.index(words) for words in GO_LIBRARY_WORDS if words in kubelet_error]
    if not quoted:
        return ours == kubelet_error
    head = kubelet_error[:min(quoted)]
    tail = kubelet_error[kubelet_error.index(DRAIN):] if DRAIN in kubelet_error else ""
    return ours.startswith(head) and ours.endswith(tail) and len(ours) >= len(head) + len(tail)


def minor(release: str) -> int:
    return int(release.split(".")[1])


def params():
    selected = build.selected_releases()
    return [pytest.param(name, layout, release, id="%s/%s@%s" % (name, layout, release))
            for name in sorted(TABLE_CASES) for layout in kubelet_cpu_tables.layouts(TABLE_CASES[name])
            for release in TABLE_CASES[name].releases if release in selected]


def _described(name: str, layout: str) -> str:
    case = TABLE_CASES[name]
    return "%s / %s (%s)%s" % (case.test, case.case, layout, ": " + case.note if case.note else "")


def _cpus_of(entries) -> Dict[str, Dict[str, tuple]]:
    return {pod: {name: tuple(parse_cpu_list(cpus)) for name, cpus in containers.items()} for pod, containers in entries.items()}


def test_every_translated_case_names_its_test_and_releases():
    counts: Dict[tuple, int] = {}
    for name, case in TABLE_CASES.items():
        assert case.test.startswith("Test") and case.case and case.releases and set(case.releases) <= set(build.RELEASES), name
        assert case.state is None or case.content is None, name
        assert case.config.get("cpuManagerPolicy") in ("none", "static"), name
        for release in case.releases:
            counts[(case.test, release)] = counts.get((case.test, release), 0) + 1
    # The size of each table at each release (kubelet's test files; the docstring of kubelet_cpu_tables.py).
    for release in build.RELEASES:
        assert counts[("TestStaticPolicyStart", release)] == 8
        assert counts[("TestStaticPolicyStartWithResvList", release)] == 5
        assert counts[("TestCPUManagerAdd", release)] == 1
    assert [counts[("TestCheckpointStateRestore", release)] for release in build.RELEASES] == [10, 10, 17, 24]
    assert counts[("TestCPUManagerCheckpointV3_VerifyChecksum_Compatibility", "v1.37.2")] == 2


VECTOR_CASES = sorted(name for name, case in TABLE_CASES.items() if case.vectors)


@pytest.mark.parametrize("name", VECTOR_CASES)
def test_the_tables_checksum_vectors_are_the_collections(name):
    """The v2 checksums and v4 data checksums the Go tables hold as valid are what the collection computes (the probe's
    ``v2_checksum``/``data_checksum``, the test writer's ``cpu_v2_checksum``/``cpu_data_checksum``); the v3 ones are
    checksums v1.37's v3 reader verifies and no other release does (``accepted_checksums``)."""
    case = TABLE_CASES[name]
    document = json.loads(case.content)
    policy, default = struct_field(document, "policyName") or "", struct_field(document, "defaultCpuSet") or ""
    entries = struct_field(document, "entries") or {}
    stored = struct_field(document, "checksum")
    if "v2" in case.vectors:
        assert v2_checksum(policy, default, entries) == stored, (name, v2_checksum(policy, default, entries), stored)
        assert cputree.cpu_v2_checksum(policy, default, entries) == stored, name
    if "v3" in case.vectors or "v3-current" in case.vectors:
        # v1.37's v3 reader verifies them (its own type name, then the legacy one); v1.34-v1.36 read no v3 checksum.
        assert [stored in accepted_checksums(policy, default, entries, minor) for minor in (34, 35, 36, 37)] == [False, False, False, True], name
        assert v2_checksum(policy, default, entries) != stored, name
    if "v4" in case.vectors:
        data, stored = struct_field(document, "data"), struct_field(document, "dataChecksum")
        assert data_checksum(data) == stored, (name, data_checksum(data), stored)
        assert cputree.cpu_data_checksum(data) == stored, name


@pytest.mark.parametrize("name, layout, release", params())
def test_kubelets_cpu_manager_does_what_its_unit_test_expects(judges, tmp_path, name, layout, release):
    """The translation: kubelet's own CPU manager, on the tree, does what the Go test expects."""
    case = TABLE_CASES[name]
    root = kubelet_cpu_tables.build(str(tmp_path / "tree"), case, layout)
    kubelet = judge_cpu(judges[release], root)
    described = _described(name, layout)
    if case.expect is None:
        assert kubelet.started, "%s should start: %s %s" % (described, release, kubelet.brief())
    else:
        assert not kubelet.started and case.expect in kubelet.error, "%s should refuse with %r: %s %s" % (
            described, case.expect, release, kubelet.brief())
    if case.held is not None:
        assert kubelet.after is not None, described
        default, entries = kubelet_cpu_tables.held_state(kubelet.after, minor(release))
        assert (parse_cpu_list(default), _cpus_of(entries)) == (parse_cpu_list(case.held[0]), _cpus_of(case.held[1])), (
            "%s: kubelet %s holds %s, the test expects %s" % (described, release, (default, entries), case.held))
        if (case.state is not None and case.state[0]) or case.content:
            assert kubelet.after == kubelet.before, "%s: kubelet %s rewrote a file it restored as is" % (described, release)


@pytest.mark.parametrize("name, layout, release", params())
def test_the_probe_says_what_kubelets_cpu_manager_does_with_the_table(judges, tmp_path, name, layout, release):
    """The probe against kubelet on the same tree; the repair touches only what the probe calls stale, and kubelet
    starts with what it writes."""
    case = TABLE_CASES[name]
    root = kubelet_cpu_tables.build(str(tmp_path / "tree"), case, layout)
    kubelet = judge_cpu(judges[release], root)
    result = probe(HostFiles(root), kubelet_release=release.lstrip("v"))
    cpu = result.cpu
    ours = cpu.start
    said = "%s @%s: kubelet %s; probe: class %s, verdict %s, stage %s: %s (%s)" % (
        _described(name, layout), release, kubelet.brief(), cpu.cls, result.assessment.verdict, ours.stage if ours else None,
        ours.error if ours else None, cpu.message)
    if ours is None:
        # The probe judges no start (policy none and no file: nothing to restore): it may say so only where kubelet starts.
        assert cpu.verdict is None and kubelet.started, said
    elif cpu.cls in UNMODELLED_CLASSES or ours.stage == "unknown":
        # Not modelled: at least never repairable (and the repair below touches nothing).
        assert not result.assessment.repairable and cpu.rewrite is None, said
    else:
        assert ours.started == kubelet.started, said
        if not kubelet.started:
            assert ours.stage == kubelet.stage, said
            assert same_words(kubelet.error, ours.error or ""), said
        if kubelet.online and case.config["cpuManagerPolicy"] == "static":  # policy none: the probe reads no CPU topology
            assert cpu_list(ours.online) == kubelet.online, said
        if kubelet.reserved:
            assert cpu_list(ours.reserved) == kubelet.reserved, said
    if not kubelet.started:
        assert cpu.verdict is not None and result.assessment.verdict not in NOTHING_TO_DO, said  # never "nothing to do"
    before = tree_snapshot(root)
    outcome = repair_node(result, backup_dir=str(tmp_path / "backups"), history_file=str(tmp_path / "history.json"))
    if result.assessment.verdict != STALE:
        assert not result.assessment.repairable, said
        assert tree_snapshot(root) == before, "%s: repair_node (%s) changed files" % (said, outcome.action)
        return
    # The repairable class: kubelet refuses the file as found, starts with the repaired one and leaves it as written.
    assert not kubelet.started, said
    assert outcome.action == "repaired" and outcome.after.cpu.cls == "in_sync", (said, outcome.message)
    repaired = judge_cpu(judges[release], root)
    assert repaired.started and repaired.after == repaired.before, (said, repaired.brief())
    original = kubelet_cpu_tables.held_state(kubelet.before, minor(release))[1]
    assert _cpus_of(kubelet_cpu_tables.held_state(repaired.after, minor(release))[1]) == _cpus_of(original), said
