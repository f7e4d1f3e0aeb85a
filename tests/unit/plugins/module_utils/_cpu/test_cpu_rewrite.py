# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cpu_manager_state re-written with only defaultCpuSet changed (_cpu/rewrite.py), against the test suite's own
writer (tests/support/cputree.py, checked against kubelet's checksum vectors) and kubelet's reader (_cpu/checkpoint.py).
Kubelet's own code judges the same files in tests/kubelet_judge/test_kubelet_judge_cpu_probe.py."""

from __future__ import annotations

import json

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import restore
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.rewrite import CpuRewrite, rewrite_default_set
from ansible_collections.nodeops.numa_drift.tests.support import cputree

ENTRIES = {"pod-b": {"side": "3", "app": "2,10"}, "pod-a": {"app": "4-5"}}
NEW_DEFAULT = frozenset({0, 1, 6, 7, 8, 9, 11, 12, 13, 14, 15})


def restored(raw, minor):
    state = restore(raw, "static", minor)
    assert not hasattr(state, "text"), state
    return state


@pytest.mark.parametrize("layout, minor", [("v2", 35), ("v4", 37), ("v4", 34)])
def test_the_rewrite_is_what_kubelets_own_marshalling_writes_with_the_new_default(layout, minor):
    """Byte for byte the file kubelet writes for that state (Go's json.Marshal order, both checksums), in the file's
    own layout: a v4 file read by v1.34 (its v2 part) is still written as v4."""
    writer = cputree.cpu_checkpoint_v4 if layout == "v4" else cputree.cpu_checkpoint_v2
    raw = writer("static", "0-1,8-9", ENTRIES)
    rewrite = rewrite_default_set(raw, restored(raw, minor), NEW_DEFAULT)
    assert isinstance(rewrite, CpuRewrite) and rewrite.layout == layout
    assert rewrite.content == writer("static", "0-1,6-9,11-15", ENTRIES)
    for reader in (34, 35, 36, 37):  # every release reads the new default and the same entries
        state = restored(rewrite.content, reader)
        assert state.default == NEW_DEFAULT and state.entries_text == ENTRIES


def test_an_empty_entry_map_is_omitted_as_kubelet_omits_it():
    raw = cputree.cpu_checkpoint_v2("static", "0-3", {})
    rewrite = rewrite_default_set(raw, restored(raw, 35), frozenset(range(8)))
    assert json.loads(rewrite.content) == {"policyName": "static", "defaultCpuSet": "0-7", "checksum": json.loads(rewrite.content)["checksum"]}
    assert rewrite.content == cputree.cpu_checkpoint_v2("static", "0-7", {})


def resealed(document):
    """``document`` with both checksums made right again (as a tool that knows them would write it)."""
    document = dict(document)
    document["checksum"] = cputree.cpu_v2_checksum(document["policyName"], document["defaultCpuSet"], document.get("entries") or {})
    if "data" in document:
        document["dataChecksum"] = cputree.cpu_data_checksum(document["data"])
    return json.dumps(document, separators=(",", ":")).encode()


def unsealed(document):
    return json.dumps(document, separators=(",", ":")).encode()


@pytest.mark.parametrize("name, mutate, why", [
    ("unknown top-level field", lambda d: resealed(dict(d, extra=1)), "fields this collection does not rewrite (extra)"),
    ("v3 podEntries beside v4", lambda d: resealed(dict(d, podEntries={"pod-a": {"cpuSet": "4-5"}})), "(podEntries)"),
    ("an unknown field in the data part", lambda d: resealed(dict(d, data=d["data"][:-1] + ',"podentries2":{}}')), "data part holds fields"),
    ("halves disagree on the entries", lambda d: resealed(dict(d, entries={"pod-a": {"app": "4"}})), "disagree"),
    ("halves disagree on the default set", lambda d: resealed(dict(d, defaultCpuSet="0-1")), "disagree"),
    ("v2 checksum wrong", lambda d: unsealed(dict(d, checksum=d["checksum"] ^ 1)), "checksum does not match its content"),
    ("v2 checksum 0", lambda d: unsealed(dict(d, checksum=0)), "checksum does not match its content"),
    ("dataChecksum wrong", lambda d: unsealed(dict(d, dataChecksum=d["dataChecksum"] ^ 1)), "dataChecksum does not match"),
    ("data not a string", lambda d: unsealed(dict(d, data=5)), "data field is not a string"),
])
def test_a_file_with_more_than_this_collection_rewrites_is_not_rewritten(name, mutate, why):
    """Nothing is dropped silently and nothing untrusted is sealed afresh: fields kubelet (or a later release) keeps,
    halves that say different things, and checksums that do not vouch for the bytes are a refusal with the reason."""
    raw = mutate(json.loads(cputree.cpu_checkpoint_v4("static", "0-1,8-9", ENTRIES)))
    state = restored(cputree.cpu_checkpoint_v4("static", "0-1,8-9", ENTRIES), 37)
    said = rewrite_default_set(raw, state, NEW_DEFAULT)
    assert isinstance(said, str) and why in said, (name, said)


def test_with_the_release_unknown_a_file_one_release_calls_corrupt_is_not_repaired(tmp_path):
    """v1.34 reads only the v2 half of a v4 file and sees a stale default set (CPUs grew); v1.37 reads the data part,
    whose dataChecksum is wrong: corrupt. With the release unknown, the refusal speaks."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe  # pylint: disable=import-outside-toplevel

    cpus = cputree.machine(sockets=2, cores_per_socket=4, threads_per_core=2)
    document = json.loads(cputree.cpu_checkpoint_v4("static", "0-1,3-5,8-9,11-13", {"pod-a": {"app": "2,10"}}))
    raw = unsealed(dict(document, dataChecksum=document["dataChecksum"] ^ 1))
    root = cputree.build_cpu_node(str(tmp_path), cpus, sorted(cpus), {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}, raw)
    assert probe(HostFiles(root), kubelet_release="1.34.4").cpu.cls == "cpus_unrecorded"  # with v1.34 known, its reading holds
    result = probe(HostFiles(root))
    assert (result.cpu.cls, result.assessment.verdict) == ("corrupt", "cpu_manager_refuses") and not result.assessment.repairable


POD_ENTRIES = {"pod-c": "6-7"}
POD_SETS = {"pod-c": frozenset({6, 7})}
POD_ENTRIES_JSON = {"pod-c": {"cpuSet": "6-7"}}


def v3_file(default, entries, checksum=None):
    """A v3 file as v1.36's MarshalCheckpoint writes it with PodLevelResourceManagers on (the checksum over the v3 struct,
    its pod-level CPU sets included, under the legacy name)."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import v3_checksum  # pylint: disable=import-outside-toplevel

    entries = {pod: dict(sorted(entries[pod].items())) for pod in sorted(entries)}  # Go's json.Marshal: map keys sorted
    document = {"policyName": "static", "defaultCpuSet": default, "entries": entries, "podEntries": POD_ENTRIES_JSON}
    sets = {pod: frozenset(cputree.parse_cpu_list(entry.get("cpuSet", ""))) for pod, entry in POD_ENTRIES_JSON.items()}
    document["checksum"] = v3_checksum("static", default, entries, sets) if checksum is None else checksum
    return json.dumps(document, separators=(",", ":")).encode()


def test_a_v3_file_keeps_its_pod_level_entries_and_is_sealed_as_v1_36_seals_it():
    """A v3 file (v1.36, PodLevelResourceManagers on) is rewritten as v3: podEntries kept, the checksum over them; v1.36
    with the gate and v1.37 read the new default and every entry, pod-level ones included."""
    raw = v3_file("0-1,8-9", ENTRIES)
    state = restore(raw, "static", 36, pod_level=True)
    assert state.layout == "v3" and state.pod_entries == POD_SETS
    rewrite = rewrite_default_set(raw, state, NEW_DEFAULT - {6, 7})
    assert isinstance(rewrite, CpuRewrite) and rewrite.layout == "v3"
    assert rewrite.content == v3_file("0-1,8-9,11-15", ENTRIES)
    for minor in (36, 37):
        again = restore(rewrite.content, "static", minor, pod_level=True)
        assert (again.layout, again.default, again.entries_text, again.pod_entries) == ("v3", NEW_DEFAULT - {6, 7}, ENTRIES, POD_SETS)


def test_a_v4_file_keeps_its_pod_level_entries_and_baselines():
    """v1.37's data part keeps podEntries and baselines as kubelet marshals them (after the entries, omitempty)."""
    data = json.dumps({"policyName": "static", "defaultCpuSet": "0-1,8-9", "entries": ENTRIES, "podEntries": POD_ENTRIES_JSON,
                       "baselines": {"pod-a": {"app": {"baseline": "4-5"}}}}, separators=(",", ":"))
    raw = cputree.cpu_checkpoint_v4("static", "0-1,8-9", ENTRIES, data=data)
    state = restore(raw, "static", 37, baselines_on=True, pod_level=True)
    rewrite = rewrite_default_set(raw, state, NEW_DEFAULT - {6, 7})
    assert isinstance(rewrite, CpuRewrite) and rewrite.layout == "v4"
    inner = json.loads(json.loads(rewrite.content)["data"])
    assert list(inner) == ["policyName", "defaultCpuSet", "entries", "podEntries", "baselines"]
    assert (inner["defaultCpuSet"], inner["podEntries"], inner["baselines"]) == ("0-1,8-9,11-15", POD_ENTRIES_JSON, {"pod-a": {"app": {"baseline": "4-5"}}})
    again = restore(rewrite.content, "static", 37, baselines_on=True, pod_level=True)
    assert (again.default, again.entries_text, again.pod_entries) == (NEW_DEFAULT - {6, 7}, ENTRIES, POD_SETS)
    assert restore(rewrite.content, "static", 34).default == NEW_DEFAULT - {6, 7}  # the v2 half says the same


def test_a_v3_file_whose_checksum_does_not_cover_its_pod_entries_is_not_rewritten():
    raw = v3_file("0-1,8-9", ENTRIES, checksum=cputree.cpu_v2_checksum("static", "0-1,8-9", ENTRIES) ^ 1)
    state = restore(cputree.cpu_checkpoint_v2("static", "0-1,8-9", ENTRIES), "static", 36)
    assert rewrite_default_set(raw, state, NEW_DEFAULT) == "its checksum does not match its content"
