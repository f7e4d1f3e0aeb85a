# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every write to the checkpoint shares (repair, sideline, restore): the outcome and the error
records, the lock around a write, stale temporary files removed, the history settled and recorded,
the original put back when a write or its verification fails, the backup, and :func:`tidy_node` (what a
killed run left, removed when there is nothing else to do). The procedure is described in
:mod:`_write.repair`; :mod:`_write.sideline` moves a checkpoint aside and restores a backup. Stdlib only.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Callable, List, Optional, Tuple, TypeVar

from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.assess import assess_cpu_manager
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment, assess
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult, read_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import (
    atomic_write,
    discard_backup,
    is_our_temp_file,
    remove_stale_temp_files,
    write_backup,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import (
    HistoryError,
    appended,
    has_pending,
    new_entry,
    pending_entry,
    read_history,
    settled,
    write_history,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import STATE_DIR, lock_path, node_lock
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record

__all__ = [
    "BACKUP_DIR",
    "RESTORABLE_REASONS",
    "REPAIRED_BY",
    "RepairError",
    "RepairOutcome",
    "default_backup_dir",
    "tidy_node",
]


BACKUP_DIR = STATE_DIR + "/backups"
# A restore without a named backup takes the newest original: the copy kept before a repair or
# a sideline, never the copy of a repaired file kept before an earlier restore.
RESTORABLE_REASONS = ("before-repair", "sidelined")
REPAIRED_BY = ("module", "role", "guard")

T = TypeVar("T")


class RepairError(Exception):
    """The procedure failed; ``message`` says what was and was not touched."""

    def __init__(self, message: str, backup_file: Optional[str] = None, touched: bool = False, cpu_backup_file: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.backup_file = backup_file
        self.touched = touched
        self.cpu_backup_file = cpu_backup_file


class RepairOutcome(Record, frozen=True):
    """What one call did. ``action``: repaired, sidelined, restored, none, refused, loop_guard, dry_run. ``backup_file``,
    ``written_layout`` and ``restored_from`` are memory_manager_state's only (None when it was not written); a call that
    wrote cpu_manager_state says its own in ``cpu_backup_file``, ``cpu_written_layout`` and ``cpu_restored_from``."""

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
    cpu_backup_file: Optional[str] = None
    cpu_written_layout: Optional[str] = None
    cpu_restored_from: Optional[str] = None


def default_backup_dir(root: str) -> str:
    return under_root(root, BACKUP_DIR)


def _bound_option(assessment: Assessment) -> str:
    # Re-assess with the bound the probe resolved (the auto bound needs no second /proc/iomem read).
    return "off" if assessment.bound_bytes == 0 else str(assessment.bound_bytes)


_AS_PROBED = b"\0as probed"  # never a checkpoint's bytes: kubelet's JSON reader refuses a NUL


def _reassess(result: ProbeResult, raw: Optional[bytes], cpu_raw: Optional[bytes] = _AS_PROBED) -> Assessment:
    """A fresh assessment of the node with ``raw`` as memory_manager_state and ``cpu_raw`` as cpu_manager_state (None:
    absent; by default the bytes the probe read), from the probe's other facts."""
    cpu = result.cpu
    read = result.cpu_read
    if read is not None:
        cpu = assess_cpu_manager(result.settings, read.topology, read.raw if cpu_raw is _AS_PROBED else cpu_raw, read.path)
    return assess(raw, result.node, result.settings, _bound_option(result.assessment), cpu)


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


def _changed_since(path: str, probed: Optional[bytes]) -> Optional[bytes]:
    """The bytes at ``path`` when they differ from what the probe read there (``b""`` standing for "now absent"), else None."""
    current = read_checkpoint(path)
    if current == probed:
        return None
    return b"" if current is None else current


def _changed_since_probe(result: ProbeResult) -> Optional[bytes]:
    """The checkpoint's bytes when they differ from the probe's (:func:`_changed_since`)."""
    return _changed_since(result.path, result.raw)


def _cpu_changed_since_probe(result: ProbeResult) -> Optional[bytes]:
    """The same for cpu_manager_state, when the probe read it."""
    return None if result.cpu_read is None else _changed_since(result.cpu_read.path, result.cpu_read.raw)


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
              path: str, before: Optional[bytes], write: Callable[[], T], cpu_backup_file: Optional[str] = None) -> Tuple[T, str]:
    """Run ``write`` between a pending history entry and its settlement; (its result, text to add to the message).

    The entry is written first, so a kill after the rename still leaves it (pending, counted by the
    loop guard) for the next run to settle. When the history cannot be written the write goes on
    (the message says so), as a full state directory must not block a repair.
    """
    action, by, verdict_before, backup_file, summary = entry_fields
    now = time.time()
    entry = pending_entry(new_entry(action, by, verdict_before, backup_file, summary, now, cpu_backup_file), path, _digest(before))
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


def _verification_failed(written: List[Tuple[str, bytes, Optional[str]]], problems: List[str]) -> RepairError:
    """The written files (``(path, original bytes, backup)`` each) failed verification: every original put back."""
    failed = [(path, problem) for path, original, _backup_file in written for problem in [_put_back(path, original)] if problem is not None]
    backup = written[-1][2]
    what, originals = ("checkpoint", "original") if len(written) == 1 else ("checkpoints", "originals")
    if not failed:
        return RepairError("the written %s failed verification, the %s %s put back: %s" % (
            what, originals, "was" if len(written) == 1 else "were", "; ".join(problems)), backup, touched=True)
    return RepairError(
        "the written %s failed verification (%s) and putting the %s back failed too (%s): restore %s by hand"
        % (what, "; ".join(problems), originals, "; ".join(problem for _path, problem in failed),
           " and ".join(str(backup_file) for _path, _original, backup_file in written)), backup, touched=True)


def _backup(backup_dir: str, path: str, content: bytes, reason: str) -> str:
    try:
        return write_backup(backup_dir, os.path.basename(path), content, reason)
    except OSError as error:
        raise RepairError("could not back up %s into %s, the checkpoint was not touched: %s" % (path, backup_dir, error)) from None


def _history_or_refuse(history_file: str) -> list:
    try:
        return read_history(history_file)
    except HistoryError as error:
        raise RepairError("%s; nothing was touched" % error) from None
