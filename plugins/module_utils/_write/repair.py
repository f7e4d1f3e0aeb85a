# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair procedure of one node: the one implementation for the module, the role and the guard.

:func:`repair_node` rewrites a ``drift_within_bound`` checkpoint with the plan of the probe;
:func:`sideline_checkpoint` moves a checkpoint into the backup directory (kubelet's own
advice: "drain this node and delete the memory manager checkpoint file");
:func:`restore_checkpoint` puts a backup back. Each one, when it writes:

1. holds the node lock (``_lock.node_lock``), so concurrent runs serialize;
2. removes the temporary files a killed run of ours left (``_files.remove_stale_temp_files``);
3. re-reads the checkpoint: a file that changed since the probe is not touched, except when
   it now is ``in_sync`` (another run repaired it meanwhile: nothing to do, ``changed`` false);
4. settles the history entries a killed run left pending (``_history.settled``);
5. backs up the original outside the kubelet directory, records the run in the repair history
   (``_history``, which the loop guard reads) as pending, writes through the one verified write
   path (``_files.atomic_write``), re-reads and re-verifies with the readers of every kubelet
   era (docs/safety.md), puts the original back when that fails, and settles the
   entry: kept when the checkpoint changed, dropped when it holds the original bytes. A kill
   at any point leaves the entry true once the next run settles it.

``changed`` is true only when the checkpoint's bytes really changed. A failure raises
:class:`RepairError`, whose message says what was and was not touched; a backup of bytes
that are still in place is removed, so that a later "restore the newest backup" cannot pick
up a copy of a write that never happened. Stdlib only.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Callable, List, Optional, Tuple, TypeVar

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import MAX_CHECKPOINT_BYTES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import (
    Assessment,
    assess,
    verify_written,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult, read_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import summary_line
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import (
    atomic_write,
    discard_backup,
    fsync_directory,
    is_our_temp_file,
    latest_backup,
    read_regular_file,
    remove_stale_temp_files,
    write_backup,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import (
    HistoryError,
    appended,
    has_pending,
    history_path,
    loop_guard_message,
    new_entry,
    pending_entry,
    read_history,
    settled,
    write_history,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import STATE_DIR, lock_path, node_lock
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.paths import under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record

__all__ = [
    "BACKUP_DIR",
    "RESTORABLE_REASONS",
    "REPAIRED_BY",
    "RepairError",
    "RepairOutcome",
    "default_backup_dir",
    "tidy_node",
    "repair_node",
    "sideline_checkpoint",
    "restore_checkpoint",
]

BACKUP_DIR = STATE_DIR + "/backups"
# A restore without a named backup takes the newest original: the copy kept before a repair or
# a sideline, never the copy of a repaired file kept before an earlier restore.
RESTORABLE_REASONS = ("before-repair", "sidelined")
REPAIRED_BY = ("module", "role", "guard")

T = TypeVar("T")


class RepairError(Exception):
    """The procedure failed; ``message`` says what was and was not touched."""

    def __init__(self, message: str, backup_file: Optional[str] = None, touched: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.backup_file = backup_file
        self.touched = touched


class RepairOutcome(Record, frozen=True):
    """What one call did. ``action``: repaired, sidelined, restored, none, refused, loop_guard, dry_run."""

    changed: bool
    verdict_before: str
    verdict_after: Optional[str]
    backup_file: Optional[str]
    message: str
    loop_tripped: bool = False
    action: str = "none"
    written_layout: Optional[str] = None
    after: Optional[Assessment] = None
    removed_temp_files: Tuple[str, ...] = ()
    restored_from: Optional[str] = None


def default_backup_dir(root: str) -> str:
    return under_root(root, BACKUP_DIR)


def _bound_option(assessment: Assessment) -> str:
    # Re-assess with the bound the probe resolved (the auto bound needs no second /proc/iomem read).
    return "off" if assessment.bound_bytes == 0 else str(assessment.bound_bytes)


def _reassess(result: ProbeResult, raw: Optional[bytes]) -> Assessment:
    return assess(raw, result.node, result.settings, _bound_option(result.assessment))


def _clean_stale(directories: List[str]) -> Tuple[str, ...]:
    removed: List[str] = []
    for directory in sorted(set(directories)):
        removed += remove_stale_temp_files(directory)
    return tuple(removed)


def _stale_leftovers(root: str, directories: List[str], history_file: Optional[str]) -> bool:
    """Whether a killed run of ours left a temporary file, the lock file or a pending history entry (no lock taken)."""
    if os.path.lexists(lock_path(root)) or (history_file and _pending_history(history_file)):
        return True
    for directory in set(directories):
        try:
            if any(is_our_temp_file(name) for name in os.listdir(directory)):
                return True
        except OSError:
            continue
    return False


def _pending_history(history_file: str) -> bool:
    try:
        return has_pending(read_history(history_file))
    except HistoryError:
        return False


def tidy_node(result: ProbeResult, directories: List[str], lock_timeout: float = 30, history_file: Optional[str] = None) -> Tuple[str, ...]:
    """Remove what a killed run of ours left (temporary files, the lock file; a pending history entry is
    settled) when there is nothing else to do.

    Takes the lock only when there is something to remove, so a clean node is not touched at all.
    The lock file counts as removed when it was there before.
    """
    root = result.node.root
    if not _stale_leftovers(root, directories, history_file):
        return ()
    stale_lock = (lock_path(root),) if os.path.lexists(lock_path(root)) else ()
    try:
        with node_lock(lock_path(root), lock_timeout):
            removed = _clean_stale(directories)
            if history_file:
                _settle(history_file)
    except OSError:
        return ()  # best effort: the next run that writes tries again
    return removed + stale_lock


def _under_lock(result: ProbeResult, directories: List[str], lock_timeout: float, history_file: str,
                body: Callable[[Tuple[str, ...]], T]) -> T:
    try:
        with node_lock(lock_path(result.node.root), lock_timeout):
            removed = _clean_stale(directories)
            _settle(history_file)
            return body(removed)
    except RepairError:
        raise
    except OSError as error:  # the lock itself (read-only or full state directory, timeout)
        raise RepairError("%s; %s was not touched" % (error, result.path)) from None


def _changed_since_probe(result: ProbeResult) -> Optional[bytes]:
    """The checkpoint's bytes when they differ from the probe's (``b""`` standing for "now absent"), else None."""
    current = read_checkpoint(result.path)
    if current == result.raw:
        return None
    return b"" if current is None else current


def _digest(content: Optional[bytes]) -> Optional[str]:
    return None if content is None else hashlib.sha256(content).hexdigest()


def _checkpoint_digest(path: str) -> Optional[str]:
    try:
        return _digest(read_checkpoint(path))
    except OSError:
        return "unreadable"  # not the bytes it had: the entry is kept (the loop guard errs on counting)


def _settle(history_file: str) -> str:
    """Settle the pending entries of the history (see ``_history.settled``); the text to add to a message on failure."""
    try:
        entries, changed = settled(read_history(history_file), _checkpoint_digest)
        if changed:
            write_history(history_file, entries)
    except (HistoryError, OSError) as error:
        return " (the repair history %s could not be settled: %s; the next run settles it)" % (history_file, error)
    return ""


def _recorded(history_file: str, entry_fields: Tuple[str, str, str, Optional[str], str], window_hours: float,
              path: str, before: Optional[bytes], write: Callable[[], T]) -> Tuple[T, str]:
    """Run ``write`` between a pending history entry and its settlement; (its result, text to add to the message).

    The entry is written first, so a kill after the rename still leaves it (pending, counted by the
    loop guard) for the next run to settle. When the history cannot be written the write goes on
    (the message says so), as a full state directory must not block a repair.
    """
    action, by, verdict_before, backup_file, summary = entry_fields
    now = time.time()
    entry = pending_entry(new_entry(action, by, verdict_before, backup_file, summary, now), path, _digest(before))
    try:
        write_history(history_file, appended(read_history(history_file), entry, window_hours, now))
        note = ""
    except (HistoryError, OSError) as error:
        note = " (the repair history %s could not be written: %s)" % (history_file, error)
    try:
        value = write()
    finally:
        settle_note = _settle(history_file)
    return value, note or settle_note


def _put_back(path: str, original: bytes) -> Optional[str]:
    """Write the original bytes back; the error text if even that failed."""
    try:
        atomic_write(path, original)
    except OSError as error:
        return str(error)
    return None


def _failed_write(path: str, original: Optional[bytes], backup: Optional[str], what: str, error: object) -> RepairError:
    """The error of a failed write, after making the node truthful: original back in place, no misleading backup."""
    now = read_checkpoint(path)
    if now == original:
        note = "%s was not changed" % path
        if backup:
            problem = discard_backup(backup)
            note += "; its backup %s was %s" % (backup, "removed" if problem is None else "NOT removed (%s)" % problem)
            backup = None if problem is None else backup
        return RepairError("could not %s %s: %s; %s" % (what, path, error, note), backup, touched=False)
    if original is None:
        return RepairError("could not %s %s: %s; the file may be incomplete: remove it" % (what, path, error), backup, touched=True)
    problem = _put_back(path, original)
    if problem is None:
        return RepairError("could not %s %s: %s; the original was put back (backup %s)" % (what, path, error, backup), backup, touched=True)
    return RepairError(
        "could not %s %s: %s; putting the original back failed too (%s): restore %s by hand" % (what, path, error, problem, backup),
        backup, touched=True,
    )


def _verification_failed(path: str, original: bytes, backup: Optional[str], problems: List[str]) -> RepairError:
    problem = _put_back(path, original)
    if problem is None:
        return RepairError("the written checkpoint failed verification, the original was put back: %s" % "; ".join(problems), backup, touched=True)
    return RepairError(
        "the written checkpoint failed verification (%s) and putting the original back failed too (%s): restore %s by hand"
        % ("; ".join(problems), problem, backup), backup, touched=True)


def _backup(backup_dir: str, result: ProbeResult, content: bytes, reason: str) -> str:
    try:
        return write_backup(backup_dir, os.path.basename(result.path), content, reason)
    except OSError as error:
        raise RepairError("could not back up %s into %s, the checkpoint was not touched: %s" % (result.path, backup_dir, error)) from None


def _history_or_refuse(history_file: str) -> list:
    try:
        return read_history(history_file)
    except HistoryError as error:
        raise RepairError("%s; nothing was touched" % error) from None


def repair_node(
    result: ProbeResult,
    *,
    backup: bool = True,
    backup_dir: Optional[str] = None,
    history_file: Optional[str] = None,
    loop_max_repairs: int = 3,
    loop_window_hours: float = 24,
    by: str = "module",
    dry_run: bool = False,
    lock_timeout: float = 30,
) -> RepairOutcome:
    """Repair the checkpoint of ``result`` when, and only when, its verdict is ``drift_within_bound``.

    Other verdicts touch nothing: ``in_sync``/``no_checkpoint``/``kubelet_tolerates`` give
    ``action="none"``, the rest ``action="refused"`` (``message`` = causes and advice). The loop
    guard gives ``action="loop_guard"``, ``loop_tripped=True``. ``dry_run`` touches nothing and
    takes no lock. Raises :class:`RepairError` when a step fails.
    """
    assessment = result.assessment
    verdict = assessment.verdict
    if not assessment.repairable and verdict not in NOTHING_TO_DO:
        return RepairOutcome(False, verdict, verdict, None, _refusal(result), action="refused")
    root = result.node.root
    backup_dir = backup_dir or default_backup_dir(root)
    history_file = history_file or history_path(root)
    directories = [os.path.dirname(result.path), backup_dir, os.path.dirname(history_file)]
    if verdict in NOTHING_TO_DO:
        removed = () if dry_run else tidy_node(result, directories, lock_timeout, history_file)
        return RepairOutcome(False, verdict, verdict, None, "%s: %s" % (verdict, assessment.advice), removed_temp_files=removed)
    if dry_run:
        tripped = loop_guard_message(_history_or_refuse(history_file), loop_max_repairs, loop_window_hours, time.time(), history_file)
        if tripped:
            return RepairOutcome(False, verdict, verdict, None, tripped, loop_tripped=True, action="loop_guard")
        return RepairOutcome(True, verdict, "in_sync", None, "dry run: would repair: " + summary_line(assessment),
                             action="dry_run", written_layout=assessment.plan.layout)

    def body(removed: Tuple[str, ...]) -> RepairOutcome:
        changed = _changed_since_probe(result)
        if changed is not None:
            return _already_repaired(result, changed, removed)
        tripped = loop_guard_message(_history_or_refuse(history_file), loop_max_repairs, loop_window_hours, time.time(), history_file)
        if tripped:
            return RepairOutcome(False, verdict, verdict, None, tripped, loop_tripped=True, action="loop_guard",
                                 removed_temp_files=removed)
        return _write_plan(result, backup_dir if backup else None, history_file, by, loop_window_hours, removed)

    return _under_lock(result, directories, lock_timeout, history_file, body)


def _refusal(result: ProbeResult) -> str:
    assessment = result.assessment
    return "refusing to repair %s: verdict %s: %s. What to do: %s" % (
        result.path, assessment.verdict, "; ".join(assessment.causes_for(assessment.verdict)), assessment.advice)


def _already_repaired(result: ProbeResult, current: bytes, removed: Tuple[str, ...]) -> RepairOutcome:
    after = _reassess(result, current or None)
    if after.verdict == "in_sync":
        return RepairOutcome(False, result.assessment.verdict, "in_sync", None,
                             "%s is already in sync (another run repaired it meanwhile): nothing was touched" % result.path,
                             after=after, removed_temp_files=removed)
    raise RepairError("%s changed while it was being assessed (now %s): is kubelet running? Nothing was touched"
                      % (result.path, after.verdict))


def _write_plan(result: ProbeResult, backup_dir: Optional[str], history_file: str, by: str, window_hours: float,
                removed: Tuple[str, ...]) -> RepairOutcome:
    plan = result.assessment.plan
    backup_file = _backup(backup_dir, result, result.raw, "before-repair") if backup_dir else None

    def write() -> Assessment:
        try:
            atomic_write(result.path, plan.content)
        except OSError as error:
            raise _failed_write(result.path, result.raw, backup_file, "write", error) from None
        written = read_checkpoint(result.path)
        after = _reassess(result, written)
        problems = verify_written(written or b"", plan)
        if after.verdict != "in_sync":
            problems.append("a fresh probe of the written file says %s" % after.verdict)
        if problems:
            raise _verification_failed(result.path, result.raw, backup_file, problems)
        return after

    summary = summary_line(result.assessment)
    entry = ("repaired", by, result.assessment.verdict, backup_file, summary)
    after, note = _recorded(history_file, entry, window_hours, result.path, result.raw, write)
    message = "repaired %s (%s); backup %s%s" % (result.path, summary, backup_file or "none (backup=false)", note)
    return RepairOutcome(True, result.assessment.verdict, after.verdict, backup_file, message, action="repaired",
                         written_layout=plan.layout, after=after, removed_temp_files=removed)


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
