# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The repair procedure of one node: the one implementation for the module, the role and the guard.

:func:`repair_node` rewrites a ``drift_within_bound`` checkpoint with the plan of the probe;
:func:`_write.sideline.sideline_checkpoint` moves a checkpoint into the backup directory (kubelet's own
advice: "drain this node and delete the memory manager checkpoint file");
:func:`_write.sideline.restore_checkpoint` puts a backup back. The steps they share are
:mod:`_write.procedure`. Each one, when it writes:

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

import os
import time
from typing import Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift import Assessment, verify_written
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import ProbeResult, read_checkpoint
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import summary_line
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import atomic_write
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import history_path, loop_guard_message
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import (
    RepairError,
    RepairOutcome,
    _backup,
    _changed_since_probe,
    _failed_write,
    _history_or_refuse,
    _reassess,
    _recorded,
    _under_lock,
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
