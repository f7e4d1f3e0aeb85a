# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet_mm_checkpoint state=restored: the newest or a named backup back through the verified write."""

from __future__ import annotations

import errno
import os
import stat

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import files as _files
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import procedure as _procedure
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import sideline as _sideline
from ansible_collections.nodeops.numa_drift.plugins.modules import kubelet_mm_checkpoint
from ansible_collections.nodeops.numa_drift.tests.support.scenario import checkpoint_file, tree_snapshot
from ansible_collections.nodeops.numa_drift.tests.support.module_runner import kaslr_node, read_bytes

BACKUPS = "var/lib/nodeops-numa-drift/backups"


def repaired_node(run, tmp_path):
    """A drifted node after a repair: (root, original bytes, repaired bytes, the before-repair backup)."""
    root = kaslr_node(tmp_path)
    original = read_bytes(checkpoint_file(root))
    result = run(kubelet_mm_checkpoint, {"root": root})
    assert result["changed"] is True
    return root, original, read_bytes(checkpoint_file(root)), result["backup_file"]


def test_restore_puts_the_newest_backup_back_and_keeps_the_replaced_file(run, tmp_path):
    root, original, repaired, backup = repaired_node(run, tmp_path)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    assert result["changed"] is True
    assert result["action"] == "restored"
    assert result["restored_from"] == backup
    assert result["verdict"] == "in_sync"
    assert result["after"]["verdict"] == "drift_within_bound"
    path = checkpoint_file(root)
    assert read_bytes(path) == original
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert result["backup_file"].endswith(".before-restore")
    assert read_bytes(result["backup_file"]) == repaired
    assert "restored %s to %s" % (backup, path) in result["message"]
    assert not [name for name in os.listdir(os.path.dirname(path)) if name.startswith(".")]


def test_restore_is_idempotent_and_never_picks_the_before_restore_copy(run, tmp_path):
    root, original, _repaired, backup = repaired_node(run, tmp_path)
    run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    snapshot = tree_snapshot(root)
    again = run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    assert again["changed"] is False
    assert again["restored_from"] == backup
    assert "already holds the bytes" in again["message"]
    assert tree_snapshot(root) == snapshot
    assert read_bytes(checkpoint_file(root)) == original
    assert run(kubelet_mm_checkpoint, {"root": root, "state": "restored"}, check_mode=True)["changed"] is False


def test_restore_a_named_backup(run, tmp_path):
    root, original, repaired, _backup = repaired_node(run, tmp_path)
    named = str(tmp_path / "kept-by-hand")
    with open(named, "wb") as handle:
        handle.write(original)
    os.utime(named, (1, 1))  # older than every backup: only chosen because it is named
    run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored", "backup_file": named})
    assert result["changed"] is False  # the newest backup held the same bytes
    with open(named, "wb") as handle:
        handle.write(repaired)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored", "backup_file": named})
    assert result["changed"] is True
    assert result["restored_from"] == named
    assert read_bytes(checkpoint_file(root)) == repaired


def test_restore_in_check_and_diff_mode_touches_nothing(run, tmp_path):
    root, _original, _repaired, backup = repaired_node(run, tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored"}, check_mode=True, diff_mode=True)
    assert result["changed"] is True
    assert result["action"] == "dry_run"
    assert result["restored_from"] == backup
    assert result["diff"]["after"] == "%s (drift_within_bound)\n" % backup
    assert tree_snapshot(root) == before


def test_restore_after_a_sideline(run, tmp_path):
    root = kaslr_node(tmp_path)
    original = read_bytes(checkpoint_file(root))
    sidelined = run(kubelet_mm_checkpoint, {"root": root, "state": "absent"})
    assert not os.path.exists(checkpoint_file(root))
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    assert result["changed"] is True
    assert result["restored_from"] == sidelined["backup_file"]
    assert "backup_file" not in result  # there was no checkpoint to keep
    assert "did not exist" in result["message"]
    assert read_bytes(checkpoint_file(root)) == original


def test_restore_without_any_backup_fails_touching_nothing(run, tmp_path):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    assert result["failed"] is True
    assert result["msg"].startswith("no backup of memory_manager_state in %s" % os.path.join(root, BACKUPS))
    assert "nothing was touched" in result["msg"]
    assert tree_snapshot(root) == before


def test_restore_of_a_backup_that_is_not_a_regular_file(run, tmp_path):
    root = kaslr_node(tmp_path)
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored", "backup_file": fifo})
    assert result["failed"] is True
    assert result["msg"] == "cannot read the backup: %s is a FIFO (named pipe), not a regular file; nothing was touched" % fifo
    assert tree_snapshot(root) == before


def test_a_failed_restore_leaves_the_checkpoint_and_no_misleading_copy(run, tmp_path, monkeypatch):
    root, _original, repaired, _backup = repaired_node(run, tmp_path)
    backups_before = sorted(os.listdir(os.path.join(root, BACKUPS)))

    def read_only(target, content, *args, **kwargs):
        if target == checkpoint_file(root):
            raise _files.WriteError(target, "writing a temporary file", OSError(errno.EROFS, os.strerror(errno.EROFS)), replaced=False)
        return _files.atomic_write(target, content, *args, **kwargs)

    monkeypatch.setattr(_sideline, "atomic_write", read_only)
    monkeypatch.setattr(_procedure, "atomic_write", read_only)
    result = run(kubelet_mm_checkpoint, {"root": root, "state": "restored"})
    assert result["failed"] is True
    assert result["touched"] is False
    assert "was not changed; its backup" in result["msg"] and "was removed" in result["msg"]
    assert read_bytes(checkpoint_file(root)) == repaired
    assert sorted(os.listdir(os.path.join(root, BACKUPS))) == backups_before


def test_backup_file_is_only_for_restored(run, tmp_path):
    root = kaslr_node(tmp_path)
    before = tree_snapshot(root)
    result = run(kubelet_mm_checkpoint, {"root": root, "backup_file": str(tmp_path / "x")})
    assert result["failed"] is True
    assert result["msg"] == "backup_file is only used with state=restored"
    assert tree_snapshot(root) == before


def test_a_repair_of_both_files_is_rolled_back_through_the_module_with_both_backups(run, tmp_path):
    """The module's side of the remediate role's rollback: the repair returns both backups (cpu_backup_file beside
    backup_file), and state=restored with both puts both originals back; cpu_backup_file needs state=restored."""
    from ansible_collections.nodeops.numa_drift.tests.support import cputree  # pylint: disable=import-outside-toplevel

    root = kaslr_node(tmp_path)
    cpu_path = cputree.add_static_cpu_manager(root, range(16), "0-1,3-5,8-9,11-13", {"pod-a": {"app": "2,10"}})
    originals = (read_bytes(checkpoint_file(root)), read_bytes(cpu_path))
    repaired = run(kubelet_mm_checkpoint, {"root": root})
    assert repaired["changed"] is True and repaired["verdict"] == "cpu_default_set_stale"
    assert (repaired["written_layout"], repaired["cpu_written_layout"]) == ("legacy", "v2")
    assert read_bytes(repaired["backup_file"]) == originals[0] and read_bytes(repaired["cpu_backup_file"]) == originals[1]
    assert "cpu_manager_state.defaultCpuSet = 0-1,3-9,11-15" in repaired["diff"]["after"]
    misplaced = run(kubelet_mm_checkpoint, {"root": root, "cpu_backup_file": repaired["cpu_backup_file"]})
    assert misplaced["failed"] and misplaced["msg"] == "cpu_backup_file is only used with state=restored"
    restored = run(kubelet_mm_checkpoint, {"root": root, "state": "restored", "backup_file": repaired["backup_file"],
                                           "cpu_backup_file": repaired["cpu_backup_file"]})
    assert restored["changed"] is True and restored["after"]["verdict"] == "cpu_default_set_stale"
    assert (restored["restored_from"], restored["cpu_restored_from"]) == (repaired["backup_file"], repaired["cpu_backup_file"])
    assert (read_bytes(checkpoint_file(root)), read_bytes(cpu_path)) == originals
