# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair procedure of one node: the one implementation for the module, the role and the guard.

:func:`repair_node` rewrites a repairable node's files with the plan of the probe (``drift_within_bound``:
memory_manager_state; ``cpu_default_set_stale``: cpu_manager_state, and memory_manager_state too when its drift is
within the bound: both in one kubelet stop);
:func:`_write.sideline.sideline_checkpoint` moves a checkpoint into the backup directory (kubelet's own
advice: "drain this node and delete the memory manager checkpoint file");
:func:`_write.sideline.restore_checkpoint` puts a backup back. The steps they share are
:mod:`_write.procedure`. Each one, when it writes:

1. holds the node lock (``_lock.node_lock``), so concurrent runs serialize;
2. removes the temporary files a killed run of ours left (``_files.remove_stale_temp_files``);
3. re-reads the files: when one changed since the probe nothing is touched, except when the
   node now is ``in_sync`` (another run repaired it meanwhile: nothing to do, ``changed`` false);
4. settles the history entries a killed run left pending (``_history.settled``);
5. backs up each original outside the kubelet directory, records the run in the repair history
   (``_history``, which the loop guard reads) as pending, writes through the one verified write
   path (``_files.atomic_write``; cpu_manager_state first, as kubelet reads it first), re-reads
   and re-verifies with the readers of every kubelet era (docs/safety.md), puts every original
   back when that fails, and settles the
   entry: kept when the checkpoint changed, dropped when it holds the original bytes. A kill
   at any point leaves the entry true once the next run settles it.

``changed`` is true only when a file's bytes really changed. A failure raises
:class:`RepairError`, whose message says what was and was not touched; a backup of bytes
that are still in place is removed, so that a later "restore the newest backup" cannot pick
up a copy of a write that never happened. Stdlib only.
"""

from __future__ import annotations

import os
import time
from typing import List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment, verify_written
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult, read_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import summary_line
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import atomic_write, discard_backup
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import history_path, loop_guard_message
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.topology import record_topology
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import (
    RepairError,
    RepairOutcome,
    _backup,
    _changed_since_probe,
    _cpu_changed_since_probe,
    _failed_write,
    _history_or_refuse,
    _reassess,
    _recorded,
    _under_lock,
    _put_back,
    _verification_failed,
    default_backup_dir,
    tidy_node,
)

__all__ = [
    "repair_node",
]


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
    """Repair the files of ``result`` when, and only when, its verdict is repairable (``drift_within_bound``,
    ``cpu_default_set_stale``).

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
    if result.cpu_read is not None:
        directories.append(os.path.dirname(result.cpu_read.path))
    if verdict in NOTHING_TO_DO:
        removed = () if dry_run else tidy_node(result, directories, lock_timeout, history_file)
        return RepairOutcome(False, verdict, verdict, None, "%s: %s" % (verdict, assessment.advice), removed_temp_files=removed)
    if dry_run:
        tripped = loop_guard_message(_history_or_refuse(history_file), loop_max_repairs, loop_window_hours, time.time(), history_file)
        if tripped:
            return RepairOutcome(False, verdict, verdict, None, tripped, loop_tripped=True, action="loop_guard")
        return RepairOutcome(True, verdict, "in_sync", None, "dry run: would repair: " + summary_line(assessment),
                             action="dry_run", written_layout=assessment.plan.layout if assessment.plan else None)

    def body(removed: Tuple[str, ...]) -> RepairOutcome:
        changed, cpu_changed = _changed_since_probe(result), _cpu_changed_since_probe(result)
        if changed is not None or cpu_changed is not None:
            return _already_repaired(result, changed, cpu_changed, removed)
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


def _already_repaired(result: ProbeResult, current: Optional[bytes], cpu_current: Optional[bytes], removed: Tuple[str, ...]) -> RepairOutcome:
    """One of the files changed since the probe (``current``/``cpu_current``: its bytes now, ``b""`` when absent; None:
    unchanged): nothing to do when the node is in sync now, else an error."""
    read = result.cpu_read
    memory = result.raw if current is None else current or None
    cpu_raw = None if read is None else read.raw if cpu_current is None else cpu_current or None
    after = _reassess(result, memory, cpu_raw)
    path = read.path if current is None and read is not None else result.path
    if after.verdict in NOTHING_TO_DO:
        return RepairOutcome(False, result.assessment.verdict, "in_sync", None,
                             "%s is already in sync (another run repaired it meanwhile): nothing was touched" % path,
                             after=after, removed_temp_files=removed)
    raise RepairError("%s changed while it was being assessed (now %s): is kubelet running? Nothing was touched"
                      % (path, after.verdict))


class _FileWrite(Record, frozen=True):
    """One file of a repair: where it is, the bytes the probe read, what to write, and its backup."""

    path: str
    original: bytes
    content: bytes
    backup_file: Optional[str] = None


def _planned_writes(result: ProbeResult) -> List[_FileWrite]:
    """The files a repair writes, in kubelet's order: cpu_manager_state (the CPU manager starts first), then
    memory_manager_state."""
    writes = []
    rewrite = result.assessment.cpu.rewrite if result.assessment.cpu else None
    if rewrite is not None and result.cpu_read is not None and result.cpu_read.raw is not None:
        writes.append(_FileWrite(result.cpu_read.path, result.cpu_read.raw, rewrite.content))
    if result.assessment.plan is not None and result.raw is not None:
        writes.append(_FileWrite(result.path, result.raw, result.assessment.plan.content))
    return writes


def _backed_up(writes: List[_FileWrite], backup_dir: Optional[str]) -> List[_FileWrite]:
    """Each original copied into ``backup_dir`` (none kept when a later copy fails: nothing was touched)."""
    done: List[_FileWrite] = []
    for one in writes:
        try:
            backup = _backup(backup_dir, one.path, one.original, "before-repair") if backup_dir else None
        except RepairError:
            for kept in done:
                if kept.backup_file:
                    discard_backup(kept.backup_file)
            raise
        done.append(_FileWrite(one.path, one.original, one.content, backup))
    return done


def _put_back_earlier(written: List[_FileWrite], error: RepairError) -> RepairError:
    """A later file's write failed: the files written before it get their originals back too, and the backups of the
    ones put back are removed (a copy of bytes still in place would mislead a later restore)."""
    if not written:
        return error
    failed = [one.path for one in written if _put_back(one.path, one.original) is not None]
    for one in written:
        if one.path not in failed and one.backup_file:
            discard_backup(one.backup_file)
    if failed:
        return RepairError("%s; putting the original back failed for %s too: restore them by hand from %s" % (
            error.message, ", ".join(failed), ", ".join(one.backup_file or "no backup" for one in written)), error.backup_file, touched=True)
    return RepairError("%s; %s %s put back" % (error.message, ", ".join(one.path for one in written),
                                               "was" if len(written) == 1 else "were"), error.backup_file, touched=error.touched)


def _naming_backups(error: RepairError, writes: List[_FileWrite], memory_path: str) -> RepairError:
    """``error`` with each kept backup under its own name: ``backup_file`` the checkpoint's, ``cpu_backup_file``
    cpu_manager_state's (never one for the other: a restore puts a named backup over the file it is named for)."""
    kept = {one.path: one.backup_file for one in writes if one.backup_file and os.path.lexists(one.backup_file)}
    cpu = next((backup for path, backup in kept.items() if path != memory_path), None)
    return RepairError(error.message, kept.get(memory_path), touched=error.touched, cpu_backup_file=cpu)


def _verify(result: ProbeResult, writes: List[_FileWrite]) -> Tuple[Assessment, List[str]]:
    """The files re-read, and what a fresh probe of them says: a memory plan verified field by field, a
    cpu_manager_state holding exactly what was written, and the node in sync (nothing to do)."""
    now = {one.path: read_checkpoint(one.path) for one in writes}
    problems: List[str] = ["%s does not hold what was written" % one.path for one in writes
                           if one.path != result.path and now[one.path] != one.content]
    read = result.cpu_read
    memory = now.get(result.path, result.raw)
    after = _reassess(result, memory, now.get(read.path, read.raw) if read else None)
    if result.assessment.plan is not None:
        problems += verify_written(memory or b"", result.assessment.plan)
    if after.verdict not in NOTHING_TO_DO or (result.assessment.plan is not None and after.verdict != "in_sync"):
        problems.append("a fresh probe of the written files says %s" % after.verdict)
    return after, problems


def _topology_recorded(result: ProbeResult) -> str:
    """Record where the pinned CPUs sit now that the CPU manager's state is good again (_write.topology); a failure
    there leaves the repair as it is and is said."""
    try:
        record_topology(result, repaired=True)
    except OSError as error:
        return "; the CPU topology record was not written: %s" % error
    return ""


def _write_plan(result: ProbeResult, backup_dir: Optional[str], history_file: str, by: str, window_hours: float,
                removed: Tuple[str, ...]) -> RepairOutcome:
    planned = _planned_writes(result)
    if not planned:
        raise RepairError("internal error: verdict %s but nothing to write; nothing was touched" % result.assessment.verdict)
    writes = _backed_up(planned, backup_dir)

    def write() -> Assessment:
        for index, one in enumerate(writes):
            try:
                atomic_write(one.path, one.content)
            except OSError as error:
                for never in writes[index + 1:]:  # not written: their backups are copies of bytes in place
                    if never.backup_file:
                        discard_backup(never.backup_file)
                failure = _put_back_earlier(writes[:index], _failed_write(one.path, one.original, one.backup_file, "write", error))
                raise _naming_backups(failure, writes, result.path) from None
        after, problems = _verify(result, writes)
        if problems:
            raise _naming_backups(_verification_failed([(one.path, one.original, one.backup_file) for one in writes], problems),
                                  writes, result.path)
        return after

    summary = summary_line(result.assessment)
    # The pending history entry follows the file written first: a kill after any write leaves it counted.
    followed = writes[0]
    memory_backup = next((one.backup_file for one in writes if one.path == result.path), None)
    cpu_backup = next((one.backup_file for one in writes if one.path != result.path), None)
    entry = ("repaired", by, result.assessment.verdict, memory_backup, summary)
    after, note = _recorded(history_file, entry, window_hours, followed.path, followed.original, write, cpu_backup_file=cpu_backup)
    note += _topology_recorded(result)
    message = "repaired %s (%s); backup %s%s" % (" and ".join(one.path for one in writes), summary,
                                                 " and ".join(one.backup_file for one in writes if one.backup_file) or "none (backup=false)", note)
    plan = result.assessment.plan
    cpu_layout = result.assessment.cpu.rewrite.layout if result.assessment.cpu and result.assessment.cpu.rewrite else None
    return RepairOutcome(True, result.assessment.verdict, after.verdict, memory_backup, message, action="repaired",
                         written_layout=plan.layout if plan else None, after=after, removed_temp_files=removed,
                         cpu_backup_file=cpu_backup, cpu_written_layout=cpu_layout)
