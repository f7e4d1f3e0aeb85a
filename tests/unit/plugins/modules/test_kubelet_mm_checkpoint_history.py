# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet_mm_checkpoint: the repair history, the loop guard, the node lock and stale temporary files."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import lock as _lock
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import repair as _repair
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import procedure as _procedure
from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint
from ansible_collections.nodeops.numa_drift.tests.support.scenario import checkpoint_file, tree_snapshot
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import kaslr_node, read_bytes

STATE = "var/lib/nodeops-numa-drift"


def history_of(root, path=None):
    with open(path or os.path.join(root, STATE, "history.json")) as handle:
        return json.load(handle)["repairs"]


def write_history(root, entries):
    os.makedirs(os.path.join(root, STATE), exist_ok=True)
    with open(os.path.join(root, STATE, "history.json"), "w") as handle:
        json.dump({"repairs": entries}, handle)


def role_entry(hours_ago, action="repaired"):
    """An entry as roles/remediate/tasks/record.yml wrote it (no ``by``)."""
    when = time.time() - hours_ago * 3600
    return {"time": when, "at": "2026-12-01T00:00:00Z", "action": action, "verdict_before": "drift_within_bound",
            "backup_file": "/x", "summary": "old"}


@pytest.mark.parametrize("by", ["module", "role", "guard"])
def test_a_repair_is_recorded_with_who_did_it(run, tmp_path, by):
    root = kaslr_node(tmp_path)
    result = run(kubelet_mm_checkpoint, {"root": root, "repaired_by": by})
    entries = history_of(root)
    assert len(entries) == 1
    entry = entries[0]
    assert entry["by"] == by
    assert entry["action"] == "repaired"
    assert entry["verdict_before"] == "drift_within_bound"
    assert entry["backup_file"] == result["backup_file"]
    assert entry["summary"].startswith("drift_within_bound;")
    assert abs(entry["time"] - time.time()) < 60
    assert entry["at"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(entry["time"]))
    assert oct(os.stat(os.path.join(root, STATE, "history.json")).st_mode & 0o777) == "0o600"


def test_the_role_history_is_kept_and_pruned_to_the_window(run, tmp_path):
    root = kaslr_node(tmp_path)
    write_history(root, [role_entry(30), role_entry(2)])
    run(kubelet_mm_checkpoint, {"root": root, "repaired_by": "role"})
    entries = history_of(root)
    assert [entry.get("by") for entry in entries] == [None, "role"]
    assert entries[0]["summary"] == "old"


@pytest.mark.parametrize("check_mode", [False, True])
def test_the_loop_guard_refuses_touching_nothing(run, tmp_path, check_mode):
    root = kaslr_node(tmp_path)
    write_history(root, [role_entry(1), role_entry(2), role_entry(3)])
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root}, check_mode=check_mode)
    assert result["failed"] is True
    assert result["loop_tripped"] is True
    assert result["action"] == "loop_guard"
    assert result["msg"].startswith("loop guard: this node was repaired 3 times in the last 24 hours (loop_max_repairs=3)")
    assert os.path.join(root, STATE, "history.json") in result["msg"]
    assert tree_snapshot(root) == before


def test_the_loop_guard_counts_only_repairs_of_the_window(run, tmp_path):
    root = kaslr_node(tmp_path)
    write_history(root, [role_entry(30), role_entry(1, "restored"), role_entry(1, "sidelined"), role_entry(1), role_entry(2, "rolled_back")])
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is True
    assert result["loop_tripped"] is False


def test_loop_guard_options(run, tmp_path):
    root = kaslr_node(tmp_path)
    write_history(root, [role_entry(1)])
    assert run(kubelet_mm_checkpoint, {"root": root, "loop_max_repairs": 1})["loop_tripped"] is True
    assert run(kubelet_mm_checkpoint, {"root": root, "loop_max_repairs": 1, "loop_window_hours": 0.5})["changed"] is True


def test_an_explicit_history_file(run, tmp_path):
    root = kaslr_node(tmp_path)
    history = str(tmp_path / "elsewhere" / "history.json")
    run(kubelet_mm_checkpoint, {"root": root, "history_file": history})
    assert [entry["action"] for entry in history_of(root, history)] == ["repaired"]
    assert not os.path.exists(os.path.join(root, STATE, "history.json"))


@pytest.mark.parametrize("content", [b"{not json", b'{"repairs": [{"time": "yesterday"}]}', b"[]", b"\xff\xfe"])
def test_an_unusable_history_refuses_touching_nothing(run, tmp_path, content):
    root = kaslr_node(tmp_path)
    os.makedirs(os.path.join(root, STATE))
    with open(os.path.join(root, STATE, "history.json"), "wb") as handle:
        handle.write(content)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["failed"] is True
    assert "the repair history %s" % os.path.join(root, STATE, "history.json") in result["msg"]
    assert "delete it to clear the loop guard" in result["msg"]
    assert result["msg"].endswith("nothing was touched")
    assert tree_snapshot(root) == before


def test_sideline_and_restore_are_recorded_but_not_counted(run, tmp_path):
    root = kaslr_node(tmp_path)
    run(kubelet_mm_checkpoint, {"root": root, "state": "absent", "repaired_by": "role"})
    run(kubelet_mm_checkpoint, {"root": root, "state": "restored", "repaired_by": "role"})
    assert [(entry["action"], entry["by"]) for entry in history_of(root)] == [("sidelined", "role"), ("restored", "role")]
    assert run(kubelet_mm_checkpoint, {"root": root, "loop_max_repairs": 1})["changed"] is True


def test_an_unwritable_history_does_not_undo_the_repair(run, tmp_path, monkeypatch):
    root = kaslr_node(tmp_path)
    history = os.path.join(root, STATE, "history.json")

    def disk_full(path, entries):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(_procedure, "write_history", disk_full)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is True
    assert "(the repair history %s could not be written: " % history in result["message"]
    assert result["after"]["verdict"] == "in_sync"
    assert not os.path.exists(history)


def test_a_history_that_is_not_a_regular_file_refuses(run, tmp_path):
    root = kaslr_node(tmp_path)
    history = tmp_path / "history-is-a-directory"
    history.mkdir()
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "history_file": str(history)})
    assert result["failed"] is True
    assert result["msg"] == "cannot read the repair history: %s is a directory, not a regular file; nothing was touched" % history
    assert tree_snapshot(root) == before


# --- the node lock --------------------------------------------------------------------------


@pytest.mark.parametrize("state", ["repaired", "absent"])
def test_a_held_lock_times_out_touching_nothing(run, tmp_path, state):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    with _lock.node_lock(_lock.lock_path(root)):
        started = time.monotonic()
        result = run(kubelet_mm_checkpoint, {"root": root, "state": state, "lock_timeout": 0.3})
        waited = time.monotonic() - started
    assert result["failed"] is True
    assert "held the node lock %s for more than 0.3 s" % _lock.lock_path(root) in result["msg"]
    assert "(pid %d)" % os.getpid() in result["msg"]
    assert "was not touched" in result["msg"]
    assert waited >= 0.3
    assert tree_snapshot(root) == before
    assert not os.path.exists(_lock.lock_path(root))


def test_a_repair_done_meanwhile_by_another_run_is_not_a_change(run, tmp_path, monkeypatch):
    root = kaslr_node(tmp_path)
    real_probe = kubelet_mm_checkpoint.probe
    by_the_other_run = []

    def probe_then_another_run_repairs(files, **kwargs):
        result = real_probe(files, **kwargs)
        other = _repair.repair_node(_probe.probe(HostFiles(root)), by="guard")
        assert other.changed is True
        by_the_other_run.append(read_bytes(checkpoint_file(root)))
        return result

    monkeypatch.setattr(kubelet_mm_checkpoint, "probe", probe_then_another_run_repairs)
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is False
    assert result["action"] == "none"
    assert "already in sync (another run repaired it meanwhile)" in result["message"]
    assert [entry["by"] for entry in history_of(root)] == ["guard"]
    assert len(os.listdir(os.path.join(root, STATE, "backups"))) == 1
    assert read_bytes(checkpoint_file(root)) == by_the_other_run[0]


# --- stale temporary files ------------------------------------------------------------------


def test_stale_temp_files_of_ours_are_removed_by_the_next_write(run, tmp_path):
    root = kaslr_node(tmp_path)
    kubelet_dir = os.path.dirname(checkpoint_file(root))
    backups = os.path.join(root, STATE, "backups")
    os.makedirs(backups)
    ours = [os.path.join(kubelet_dir, ".memory_manager_state.nodeops-numa-drift.k2j4_x9a.tmp"),
            os.path.join(backups, ".memory_manager_state.20261202T101500Z.before-repair.nodeops-numa-drift.abcdefgh.tmp")]
    # (cpu_manager_state is kubelet's other checkpoint, which the probe judges: a stale temp file of kubelet's name instead)
    foreign = [os.path.join(kubelet_dir, ".memory_manager_state.tmp1234"), os.path.join(kubelet_dir, ".cpu_manager_state.tmp5678"),
               os.path.join(backups, "notes.nodeops-numa-drift.abc.tmp")]
    for path in ours + foreign:
        with open(path, "wb") as handle:
            handle.write(b'{"partial')
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is True
    assert sorted(result["removed_temp_files"]) == sorted(ours)
    assert not any(os.path.exists(path) for path in ours)
    assert all(read_bytes(path) == b'{"partial' for path in foreign)


def test_a_refusal_or_check_mode_leaves_stale_temp_files_alone(run, tmp_path):
    root = kaslr_node(tmp_path)
    stale = os.path.join(os.path.dirname(checkpoint_file(root)), ".memory_manager_state.nodeops-numa-drift.aaaaaaaa.tmp")
    with open(stale, "wb") as handle:
        handle.write(b"x")
    before = tree_snapshot(root)
    assert run(kubelet_mm_checkpoint, {"root": root}, check_mode=True)["changed"] is True
    assert tree_snapshot(root) == before


def _pending(root, content):
    """The entry a repair killed between its history entry and its end leaves (see _history.settled)."""
    entry = role_entry(0.1)
    entry.update(by="guard", pending={"checkpoint": checkpoint_file(root), "sha256_before": hashlib.sha256(content).hexdigest()})
    return entry


def test_a_write_killed_before_the_rename_leaves_no_counted_entry(run, tmp_path):
    root = kaslr_node(tmp_path)
    original = read_bytes(checkpoint_file(root))
    write_history(root, [_pending(root, original)])  # the checkpoint still holds what it held: nothing was written
    result = run(kubelet_mm_checkpoint, {"root": root, "loop_max_repairs": 1})
    assert result["changed"] is True, result.get("msg")
    assert [(entry["action"], entry["by"], "pending" in entry) for entry in history_of(root)] == [("repaired", "module", False)]


def test_a_write_killed_after_the_rename_is_settled_and_counted(run, tmp_path):
    root = kaslr_node(tmp_path)
    original = read_bytes(checkpoint_file(root))
    repaired_root = kaslr_node(tmp_path, name="repaired")
    assert run(kubelet_mm_checkpoint, {"root": repaired_root})["changed"] is True
    with open(checkpoint_file(root), "wb") as handle:  # the killed run's rename happened
        handle.write(read_bytes(checkpoint_file(repaired_root)))
    write_history(root, [_pending(root, original)])
    assert run(kubelet_mm_checkpoint, {"root": root})["changed"] is False  # in_sync: settles the entry under the lock
    assert [(entry["action"], entry["by"], "pending" in entry) for entry in history_of(root)] == [("repaired", "guard", False)]
    with open(checkpoint_file(root), "wb") as handle:  # the drift comes back
        handle.write(original)
    result = run(kubelet_mm_checkpoint, {"root": root, "loop_max_repairs": 1})
    assert result["failed"] and result["msg"].startswith("loop guard: this node was repaired 1 times")
    assert read_bytes(checkpoint_file(root)) == original
