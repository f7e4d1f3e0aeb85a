# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sidelining a checkpoint and restoring a backup, through the procedure of :mod:`_write.repair`.

:func:`sideline_checkpoint` moves a checkpoint into the backup directory (kubelet's own advice: "drain
this node and delete the memory manager checkpoint file"); :func:`restore_checkpoint` puts a backup
back (a named one, else the newest original: ``RESTORABLE_REASONS``). Stdlib only.
"""

from __future__ import annotations

import os
from typing import Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import MAX_CHECKPOINT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import (
    atomic_write,
    fsync_directory,
    latest_backup,
    read_regular_file,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import history_path
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import (
    RESTORABLE_REASONS,
    RepairError,
    RepairOutcome,
    _backup,
    _changed_since_probe,
    _failed_write,
    _reassess,
    _recorded,
    _under_lock,
    default_backup_dir,
    tidy_node,
)

__all__ = [
    "sideline_checkpoint",
    "restore_checkpoint",
]


def sideline_checkpoint(
    result: ProbeResult,
    *,
    backup_dir: Optional[str] = None,
    history_file: Optional[str] = None,
    by: str = "module",
    dry_run: bool = False,
    lock_timeout: float = 30,
    loop_window_hours: float = 24,
) -> RepairOutcome:
    """Move the checkpoint into ``backup_dir`` (copy ``<name>.<stamp>.sidelined``, then unlink), whatever its verdict.

    Every Guaranteed pod's NUMA pinning is lost: kubelet starts with a fresh state. When the
    unlink fails (read-only kubelet directory), the copy is removed again: nothing was moved.
    """
    verdict = result.assessment.verdict
    root = result.node.root
    backup_dir = backup_dir or default_backup_dir(root)
    history_file = history_file or history_path(root)
    directories = [os.path.dirname(result.path), backup_dir, os.path.dirname(history_file)]
    if result.raw is None:
        removed = () if dry_run else tidy_node(result, directories, lock_timeout, history_file)
        return RepairOutcome(False, verdict, verdict, None, "%s does not exist: nothing to do" % result.path,
                             removed_temp_files=removed)
    if dry_run:
        return RepairOutcome(True, verdict, "no_checkpoint", None, "dry run: would move %s into %s" % (result.path, backup_dir),
                             action="dry_run")

    def body(removed: Tuple[str, ...]) -> RepairOutcome:
        if _changed_since_probe(result) is not None:
            raise RepairError("%s changed while it was being assessed: is kubelet running? Nothing was touched" % result.path)
        backup_file = _backup(backup_dir, result, result.raw, "sidelined")

        def write() -> None:
            try:
                os.unlink(result.path)
            except OSError as error:
                raise _failed_write(result.path, result.raw, backup_file, "remove", error) from None
            try:
                fsync_directory(os.path.dirname(result.path))
            except OSError as error:
                raise RepairError("removed %s (moved to %s) but could not sync its directory: %s" % (result.path, backup_file, error),
                                  backup_file, touched=True) from None

        entry = ("sidelined", by, verdict, backup_file, "sidelined " + result.path)
        _nothing, note = _recorded(history_file, entry, loop_window_hours, result.path, result.raw, write)
        return RepairOutcome(True, verdict, "no_checkpoint", backup_file, "moved %s to %s%s" % (result.path, backup_file, note),
                             action="sidelined", removed_temp_files=removed)

    return _under_lock(result, directories, lock_timeout, history_file, body)


def _restore_source(result: ProbeResult, backup_file: Optional[str], backup_dir: str) -> Tuple[str, bytes]:
    source = backup_file or latest_backup(backup_dir, os.path.basename(result.path), RESTORABLE_REASONS)
    if not source:
        raise RepairError("no backup of %s in %s (%s): nothing to restore, nothing was touched"
                          % (os.path.basename(result.path), backup_dir, ", ".join("*." + r + "*" for r in RESTORABLE_REASONS)))
    try:
        return source, read_regular_file(source, MAX_CHECKPOINT_BYTES)
    except OSError as error:
        raise RepairError("cannot read the backup: %s; nothing was touched" % error) from None


def restore_checkpoint(
    result: ProbeResult,
    *,
    backup_file: Optional[str] = None,
    backup: bool = True,
    backup_dir: Optional[str] = None,
    history_file: Optional[str] = None,
    by: str = "module",
    dry_run: bool = False,
    lock_timeout: float = 30,
    loop_window_hours: float = 24,
) -> RepairOutcome:
    """Put ``backup_file`` (default: the newest ``before-repair``/``sidelined`` backup) back as the checkpoint.

    Through the same verified write. Idempotent: a checkpoint that already holds the backup's
    bytes is left alone (``changed`` false). With ``backup``, the checkpoint it replaces is
    kept as ``<name>.<stamp>.before-restore`` (never chosen by a later default restore).
    """
    verdict = result.assessment.verdict
    root = result.node.root
    backup_dir = backup_dir or default_backup_dir(root)
    history_file = history_file or history_path(root)
    directories = [os.path.dirname(result.path), backup_dir, os.path.dirname(history_file)]
    source, content = _restore_source(result, backup_file, backup_dir)
    if content == result.raw:
        removed = () if dry_run else tidy_node(result, directories, lock_timeout, history_file)
        return RepairOutcome(False, verdict, verdict, None, "%s already holds the bytes of %s: nothing to do" % (result.path, source),
                             restored_from=source, removed_temp_files=removed)
    after = _reassess(result, content)
    if dry_run:
        return RepairOutcome(True, verdict, after.verdict, None, "dry run: would restore %s to %s" % (source, result.path),
                             action="dry_run", after=after, restored_from=source)

    def body(removed: Tuple[str, ...]) -> RepairOutcome:
        if _changed_since_probe(result) is not None:
            raise RepairError("%s changed while it was being assessed: is kubelet running? Nothing was touched" % result.path)
        kept = _backup(backup_dir, result, result.raw, "before-restore") if backup and result.raw is not None else None

        def write() -> None:
            try:
                atomic_write(result.path, content)
            except OSError as error:
                raise _failed_write(result.path, result.raw, kept, "restore %s to" % source, error) from None

        entry = ("restored", by, verdict, source, "restored %s (%s)" % (source, after.verdict))
        _nothing, note = _recorded(history_file, entry, loop_window_hours, result.path, result.raw, write)
        message = "restored %s to %s (now %s); the replaced checkpoint %s%s" % (
            source, result.path, after.verdict, "was kept in " + kept if kept else "was not kept" if result.raw else "did not exist", note)
        return RepairOutcome(True, verdict, after.verdict, kept, message, action="restored", after=after,
                             removed_temp_files=removed, restored_from=source)

    return _under_lock(result, directories, lock_timeout, history_file, body)
