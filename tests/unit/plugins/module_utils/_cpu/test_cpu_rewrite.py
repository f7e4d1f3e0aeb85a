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
    ("baselines in the data part", lambda d: resealed(dict(d, data=d["data"][:-1] + ',"baselines":{}}')), "data part holds fields"),
    ("halves disagree on the entries", lambda d: resealed(dict(d, entries={"pod-a": {"app": "4"}})), "disagree"),
    ("halves disagree on the default set", lambda d: resealed(dict(d, defaultCpuSet="0-1")), "disagree"),
    ("v2 checksum wrong", lambda d: unsealed(dict(d, checksum=d["checksum"] ^ 1)), "v2 checksum does not match"),
    ("v2 checksum 0", lambda d: unsealed(dict(d, checksum=0)), "v2 checksum does not match"),
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
