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
from typing import List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import CHECKPOINT_FILE_NAME, MAX_CHECKPOINT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import CPU_STATE_FILE_NAME
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import (
    atomic_write,
    fsync_directory,
    latest_backup,
    read_regular_file,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import HistoryError, history_path, last_write_backups, read_history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import (
    RESTORABLE_REASONS,
    RepairError,
    RepairOutcome,
    _backup,
    _changed_since,
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
        backup_file = _backup(backup_dir, result.path, result.raw, "sidelined")

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


# A top-level key only the other manager's checkpoint has (encoding/json folds case): a backup of one file is never
# put over the other.
_OTHER_FILES_KEY = {CHECKPOINT_FILE_NAME: ("defaultcpuset", CPU_STATE_FILE_NAME), CPU_STATE_FILE_NAME: ("machinestate", CHECKPOINT_FILE_NAME)}


def _other_files_backup(content: bytes, target: str) -> Optional[str]:
    """The name of the file ``content`` is a backup of, when it is the other manager's checkpoint, else None."""
    key, other = _OTHER_FILES_KEY.get(os.path.basename(target), ("", ""))
    try:
        document = load_json(content)
    except ValueError:
        return None
    return other if key and isinstance(document, dict) and any(str(name).lower() == key for name in document) else None


def _restore_source(path: str, backup_file: Optional[str], backup_dir: str) -> Tuple[str, bytes]:
    source = backup_file or latest_backup(backup_dir, os.path.basename(path), RESTORABLE_REASONS)
    if not source:
        raise RepairError("no backup of %s in %s (%s): nothing to restore, nothing was touched"
                          % (os.path.basename(path), backup_dir, ", ".join("*." + r + "*" for r in RESTORABLE_REASONS)))
    try:
        content = read_regular_file(source, MAX_CHECKPOINT_BYTES)
    except OSError as error:
        raise RepairError("cannot read the backup: %s; nothing was touched" % error) from None
    other = _other_files_backup(content, path)
    if other:
        raise RepairError("%s holds a %s, not a %s: it is not put over %s; nothing was touched"
                          % (source, other, os.path.basename(path), path))
    return source, content


class _Restore(Record, frozen=True):
    """One file to put back: where it is, the bytes the probe read there (None: absent), the backup and its bytes."""

    path: str
    raw: Optional[bytes]
    source: str
    content: bytes
    kept: Optional[str] = None


def _default_backups(history_file: str) -> Tuple[Optional[str], Optional[str]]:
    """What a restore that names no backup puts back: when the newest repair in the history rewrote cpu_manager_state,
    exactly that repair's backups (its checkpoint backup only if it wrote the checkpoint too); else (None, None): the
    newest original of the checkpoint, as always. An unreadable history refuses: it could not tell which."""
    try:
        last = last_write_backups(read_history(history_file))
    except HistoryError as error:
        raise RepairError("%s; name the backup to restore (backup_file, cpu_backup_file): nothing was touched" % error) from None
    if last is None or last[1] is None:
        return None, None
    return last


def _restores(result: ProbeResult, backup_file: Optional[str], cpu_backup_file: Optional[str], backup_dir: str) -> List[_Restore]:
    """What to put back, cpu_manager_state first (kubelet reads it first): ``cpu_backup_file`` as cpu_manager_state
    when named; ``backup_file`` (else the newest original) as memory_manager_state, unless only a CPU backup is named."""
    restores = []
    if cpu_backup_file:
        if result.cpu_read is None:
            raise RepairError("cannot restore %s: where kubelet keeps cpu_manager_state is not known (%s); nothing was touched"
                              % (cpu_backup_file, result.assessment.verdict))
        source, content = _restore_source(result.cpu_read.path, cpu_backup_file, backup_dir)
        restores.append(_Restore(result.cpu_read.path, result.cpu_read.raw, source, content))
    if backup_file or not cpu_backup_file:
        source, content = _restore_source(result.path, backup_file, backup_dir)
        restores.append(_Restore(result.path, result.raw, source, content))
    return restores


def _after_restore(result: ProbeResult, restores: List[_Restore]) -> Assessment:
    contents = {one.path: one.content for one in restores}
    cpu = result.cpu_read
    return _reassess(result, contents.get(result.path, result.raw), contents.get(cpu.path, cpu.raw) if cpu else None)


def _restore_failed(path: str, raw: Optional[bytes], kept: Optional[str], source: str, error: OSError, earlier: List[_Restore]) -> RepairError:
    """A restore's write failed: that file made truthful (``_failed_write``), and the files restored before it put back."""
    failure = _failed_write(path, raw, kept, "restore %s to" % source, error)
    problems = []
    for one in earlier:
        try:
            if one.raw is None:
                os.unlink(one.path)  # it did not exist before the restore
            else:
                atomic_write(one.path, one.raw)
        except OSError as problem:
            problems.append("%s (%s; restore %s by hand)" % (one.path, problem, one.kept or "its backup"))
    if not earlier:
        return failure
    said = "put back too" if not problems else "NOT all put back: " + ", ".join(problems)
    return RepairError("%s; %s, restored before it, %s" % (failure.message, ", ".join(one.path for one in earlier), said),
                       failure.backup_file, touched=failure.touched or bool(problems))


def _replaced(one: _Restore, name: str) -> str:
    return "the replaced %s %s" % (name, "was kept in " + one.kept if one.kept else "was not kept" if one.raw is not None else "did not exist")


def restore_checkpoint(
    result: ProbeResult,
    *,
    backup_file: Optional[str] = None,
    cpu_backup_file: Optional[str] = None,
    backup: bool = True,
    backup_dir: Optional[str] = None,
    history_file: Optional[str] = None,
    by: str = "module",
    dry_run: bool = False,
    lock_timeout: float = 30,
    loop_window_hours: float = 24,
) -> RepairOutcome:
    """Put ``backup_file`` (default: the newest ``before-repair``/``sidelined`` backup) back as the checkpoint, and
    ``cpu_backup_file`` as cpu_manager_state (a repair of both files is rolled back with both; naming only
    ``cpu_backup_file`` restores only cpu_manager_state). Naming neither, after a repair that rewrote
    cpu_manager_state, puts back exactly that repair's backups (the history says which).

    Through the same verified write. Idempotent: a file that already holds its backup's bytes is left alone
    (``changed`` false when all do). With ``backup``, each file it replaces is kept as
    ``<name>.<stamp>.before-restore`` (never chosen by a later default restore).
    """
    verdict = result.assessment.verdict
    root = result.node.root
    backup_dir = backup_dir or default_backup_dir(root)
    history_file = history_file or history_path(root)
    directories = [os.path.dirname(result.path), backup_dir, os.path.dirname(history_file)]
    if result.cpu_read is not None:
        directories.append(os.path.dirname(result.cpu_read.path))
    if not (backup_file or cpu_backup_file):
        backup_file, cpu_backup_file = _default_backups(history_file)
    restores = _restores(result, backup_file, cpu_backup_file, backup_dir)
    sources = " and ".join(one.source for one in restores)
    memory_source = next((one.source for one in restores if one.path == result.path), None)
    cpu_source = cpu_backup_file and restores[0].source
    pending = [one for one in restores if one.content != one.raw]
    if not pending:
        removed = () if dry_run else tidy_node(result, directories, lock_timeout, history_file)
        return RepairOutcome(False, verdict, verdict, None, "%s already %s the bytes of %s: nothing to do" % (
            " and ".join(one.path for one in restores), "holds" if len(restores) == 1 else "hold", sources),
            restored_from=memory_source, cpu_restored_from=cpu_source, removed_temp_files=removed)
    after = _after_restore(result, restores)
    targets = " and ".join(one.path for one in pending)
    if dry_run:
        return RepairOutcome(True, verdict, after.verdict, None, "dry run: would restore %s to %s" % (sources, targets),
                             action="dry_run", after=after, restored_from=memory_source, cpu_restored_from=cpu_source)

    def body(removed: Tuple[str, ...]) -> RepairOutcome:
        changed = [one.path for one in pending if _changed_since(one.path, one.raw) is not None]
        if changed:
            raise RepairError("%s changed while it was being assessed: is kubelet running? Nothing was touched" % " and ".join(changed))
        kept = [_Restore(one.path, one.raw, one.source, one.content,
                         _backup(backup_dir, one.path, one.raw, "before-restore") if backup and one.raw is not None else None) for one in pending]

        def write() -> None:
            for index, one in enumerate(kept):
                try:
                    atomic_write(one.path, one.content)
                except OSError as error:
                    raise _restore_failed(one.path, one.raw, one.kept, one.source, error, kept[:index]) from None

        followed = kept[0]  # the pending history entry follows the file written first (as a repair's)
        entry = ("restored", by, verdict, followed.source, "restored %s (%s)" % (sources, after.verdict))
        _nothing, note = _recorded(history_file, entry, loop_window_hours, followed.path, followed.raw, write)
        replaced = "; ".join(_replaced(one, "checkpoint" if one.path == result.path else os.path.basename(one.path)) for one in kept)
        message = "restored %s to %s (now %s); %s%s" % (sources, targets, after.verdict, replaced, note)
        memory_kept = next((one.kept for one in kept if one.path == result.path), None)
        return RepairOutcome(True, verdict, after.verdict, memory_kept, message, action="restored", after=after,
                             removed_temp_files=removed, restored_from=memory_source, cpu_restored_from=cpu_source,
                             cpu_backup_file=next((one.kept for one in kept if one.path != result.path), None))

    return _under_lock(result, directories, lock_timeout, history_file, body)
