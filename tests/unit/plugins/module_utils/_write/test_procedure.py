# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_write/procedure.py: what every write shares, called directly on node trees: the lock
around a write, stale temporary files, the history's pending entry and its settlement, the original put back when a
write fails, the backup, and tidy_node. The writes built on it are test_repair.py and test_sideline.py."""

from __future__ import annotations

import json
import os

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import procedure
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import TEMP_MARK
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import history_path, new_entry, pending_entry, write_history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import lock_path, node_lock
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    KIB,
    MIB,
    checkpoint_file,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)

SIDELINE_ENTRY = ("sidelined", "module", "drift_within_bound", None, "test entry")


def drifted(tmp_path, name="node"):
    recorded = two_node_boot()
    return write_kubelet_node(str(tmp_path / name), recorded, recorded.moved(node0=-40 * MIB // KIB, node1=40 * MIB // KIB),
                              pods=guaranteed_pods(2, (0,)))


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)


def stale_temp(directory):
    """A temporary file a killed atomic_write left (its own naming: .<name>.nodeops-numa-drift.<random>.tmp)."""
    path = os.path.join(directory, ".memory_manager_state" + TEMP_MARK + "k1ll3d.tmp")
    write(path, b"half")
    return path


def directories(result):
    return [os.path.dirname(result.path), procedure.default_backup_dir(result.node.root)]


def entries(root):
    return json.loads(read(history_path(root)))["repairs"]


# --------------------------------------------------------------------------- records


def test_the_records_and_the_backup_dir():
    error = procedure.RepairError("boom", "/b/x", touched=True)
    assert (str(error), error.message, error.backup_file, error.touched) == ("boom", "boom", "/b/x", True)
    assert procedure.RepairError("quiet").touched is False
    outcome = procedure.RepairOutcome(False, "in_sync", "in_sync", None, "nothing")
    assert (outcome.action, outcome.loop_tripped, outcome.removed_temp_files, outcome.after) == ("none", False, (), None)
    # The backups live under the node's root, outside kubelet's state dir (docs/safety.md).
    assert procedure.default_backup_dir("/host") == "/host/var/lib/nodeops-numa-drift/backups"
    assert procedure.RESTORABLE_REASONS == ("before-repair", "sidelined")


# --------------------------------------------------------------------------- tidy_node


def test_tidy_node_on_a_clean_node_takes_no_lock_and_touches_nothing(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    before = tree_snapshot(root)
    assert procedure.tidy_node(result, directories(result), 1, history_path(root)) == ()
    assert tree_snapshot(root) == before and not os.path.lexists(lock_path(root))


def test_tidy_node_removes_what_a_killed_run_left(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    temp = stale_temp(os.path.dirname(result.path))
    write(lock_path(root), b"4242\n")  # the lock file of a killed holder
    write_history(history_path(root), [pending_entry(new_entry(*SIDELINE_ENTRY, now=1.0), result.path, "0" * 64)])
    assert procedure.tidy_node(result, directories(result), 1, history_path(root)) == (temp, lock_path(root))
    assert not os.path.lexists(temp) and not os.path.lexists(lock_path(root))
    # The pending entry's checkpoint no longer holds the bytes it named: its write happened, the entry is completed.
    [entry] = entries(root)
    assert "pending" not in entry and entry["action"] == "sidelined"
    assert read(result.path) == result.raw


def test_a_pending_entry_whose_write_never_happened_is_dropped(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    digest = procedure._digest(result.raw)  # pylint: disable=protected-access
    write_history(history_path(root), [pending_entry(new_entry(*SIDELINE_ENTRY, now=1.0), result.path, digest)])
    assert procedure._settle(history_path(root)) == ""  # pylint: disable=protected-access
    assert entries(root) == []


def test_an_unreadable_history_is_a_note_not_a_failure_when_settling(tmp_path):
    root = drifted(tmp_path)
    write(history_path(root), b"{not json")
    note = procedure._settle(history_path(root))  # pylint: disable=protected-access
    assert note.startswith(" (the repair history %s could not be settled: the repair history %s is not valid JSON"
                           % (history_path(root), history_path(root)))
    assert note.endswith("; the next run settles it)")
    with pytest.raises(procedure.RepairError, match="delete it to clear the loop guard; nothing was touched$"):
        procedure._history_or_refuse(history_path(root))  # pylint: disable=protected-access


# --------------------------------------------------------------------------- the lock and the history around a write


def test_under_lock_cleans_settles_and_runs_the_body_holding_the_lock(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    temp = stale_temp(os.path.dirname(result.path))

    def body(removed):
        assert os.path.lexists(lock_path(root))  # held while the body runs
        return removed

    assert procedure._under_lock(result, directories(result), 1, history_path(root), body) == (temp,)  # pylint: disable=protected-access
    assert not os.path.lexists(lock_path(root))  # the holder removes it


def test_a_lock_another_run_holds_is_a_repair_error_saying_nothing_was_touched(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    before = tree_snapshot(root)
    with node_lock(lock_path(root), 1):
        with pytest.raises(procedure.RepairError) as raised:
            procedure._under_lock(result, directories(result), 0, history_path(root), lambda removed: None)  # pylint: disable=protected-access
    assert raised.value.message.startswith("another run of nodeops.numa_drift (pid %d) held the node lock" % os.getpid())
    assert raised.value.message.endswith("; %s was not touched" % result.path) and not raised.value.touched
    assert tree_snapshot(root) == before


def test_a_lock_that_cannot_be_created_is_a_repair_error(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    write(os.path.join(root, "var/lib/nodeops-numa-drift"), b"a file where the state dir goes")
    with pytest.raises(procedure.RepairError, match="; %s was not touched$" % result.path):
        procedure._under_lock(result, directories(result), 1, history_path(root), lambda removed: None)  # pylint: disable=protected-access


def test_recorded_writes_a_pending_entry_first_and_settles_it_after(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    seen = []

    def write_it():
        seen.extend(entries(root))  # what a kill at this moment would leave
        os.unlink(result.path)
        return "written"

    value, note = procedure._recorded(history_path(root), SIDELINE_ENTRY, 24, result.path, result.raw, write_it)  # pylint: disable=protected-access
    assert (value, note) == ("written", "")
    assert seen[0]["pending"] == {"checkpoint": result.path, "sha256_before": procedure._digest(result.raw)}  # pylint: disable=protected-access
    [entry] = entries(root)
    assert "pending" not in entry and (entry["action"], entry["verdict_before"]) == ("sidelined", "drift_within_bound")


def test_a_failed_write_still_settles_its_entry(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))

    def fail():
        raise procedure.RepairError("no space")

    with pytest.raises(procedure.RepairError, match="no space"):
        procedure._recorded(history_path(root), SIDELINE_ENTRY, 24, result.path, result.raw, fail)  # pylint: disable=protected-access
    assert entries(root) == []  # the checkpoint still holds its bytes: nothing was written, the entry is dropped


def test_a_history_that_cannot_be_written_does_not_block_the_write(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    history = os.path.join(root, "var/lib/nodeops-numa-drift/history.json")
    os.makedirs(history)  # a directory where the file goes
    value, note = procedure._recorded(history, SIDELINE_ENTRY, 24, result.path, result.raw, lambda: 7)  # pylint: disable=protected-access
    assert value == 7 and note.startswith(" (the repair history %s could not be written: " % history)


# --------------------------------------------------------------------------- a failed write leaves the node truthful


def test_changed_since_probe(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    assert procedure._changed_since_probe(result) is None  # pylint: disable=protected-access
    write(result.path, b"kubelet wrote this")
    assert procedure._changed_since_probe(result) == b"kubelet wrote this"  # pylint: disable=protected-access
    os.unlink(result.path)
    assert procedure._changed_since_probe(result) == b""  # pylint: disable=protected-access


def test_a_write_that_changed_nothing_removes_its_backup(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    backup = procedure._backup(procedure.default_backup_dir(root), result.path, result.raw, "before-repair")  # pylint: disable=protected-access
    assert read(backup) == result.raw
    error = procedure._failed_write(result.path, result.raw, backup, "rewrite", "disk full")  # pylint: disable=protected-access
    assert error.message == "could not rewrite %s: disk full; %s was not changed; its backup %s was removed" % (result.path, result.path, backup)
    assert (error.backup_file, error.touched) == (None, False) and not os.path.exists(backup)


def test_a_half_written_checkpoint_gets_the_original_back(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    write(result.path, b'{"policyName":')
    error = procedure._failed_write(result.path, result.raw, "/b/copy", "rewrite", "killed")  # pylint: disable=protected-access
    assert error.message == "could not rewrite %s: killed; the original was put back (backup /b/copy)" % result.path
    assert error.touched and read(result.path) == result.raw


def test_a_write_where_there_was_no_file_says_to_remove_it(tmp_path):
    root = drifted(tmp_path)
    path = checkpoint_file(root)
    error = procedure._failed_write(path, None, None, "restore /b/x to", "killed")  # pylint: disable=protected-access
    assert error.message == "could not restore /b/x to %s: killed; the file may be incomplete: remove it" % path and error.touched


def test_when_even_the_put_back_fails_the_message_says_restore_by_hand(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    os.unlink(result.path)
    os.makedirs(result.path)  # the put-back cannot replace a directory
    error = procedure._verification_failed([(result.path, result.raw, "/b/copy")], ["checksum wrong"])  # pylint: disable=protected-access
    assert error.message.startswith("the written checkpoint failed verification (checksum wrong) and putting the original back "
                                    "failed too (")
    assert error.message.endswith("): restore /b/copy by hand") and error.touched


def test_a_failed_verification_puts_the_original_back(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    write(result.path, b"bad")
    error = procedure._verification_failed([(result.path, result.raw, "/b/copy")], ["a", "b"])  # pylint: disable=protected-access
    assert error.message == "the written checkpoint failed verification, the original was put back: a; b"
    assert read(result.path) == result.raw


def test_a_backup_that_cannot_be_written_refuses_before_the_checkpoint_is_touched(tmp_path):
    root = drifted(tmp_path)
    result = probe(HostFiles(root))
    backup_dir = os.path.join(root, "var/lib/nodeops-numa-drift/backups")
    write(backup_dir, b"a file where the backup dir goes")
    with pytest.raises(procedure.RepairError) as raised:
        procedure._backup(backup_dir, result.path, result.raw, "before-repair")  # pylint: disable=protected-access
    assert raised.value.message.startswith("could not back up %s into %s, the checkpoint was not touched: " % (result.path, backup_dir))
    assert read(result.path) == result.raw
