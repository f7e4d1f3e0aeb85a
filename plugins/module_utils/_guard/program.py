# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The boot guard ``numa-drift-guard``: repair at the first kubelet start of a boot, only then.

Runs as ``ExecStartPre=-`` of the unit that runs kubelet. At the first start of a boot
(``<root>/proc/sys/kernel/random/boot_id`` differs from the one recorded in
``<root>/var/lib/nodeops-numa-drift/guard.json``, or cannot be read) it probes the node and,
for a repairable verdict only (``drift_within_bound``, ``cpu_default_set_stale``), repairs through ``_repair.repair_node(by="guard")`` (backup,
history, loop guard, node lock: the same procedure as ``kubelet_mm_checkpoint``). Every other
verdict touches nothing, so kubelet fails exactly as it would without the guard. Later starts
in the same boot only refresh the metrics. It logs one line per decision on stderr, always
exits 0 (2 for bad usage) and gives up, touching nothing, once its time limit has passed.
Stdlib only (Python 3.9+): it runs with the node's ``python3`` from a zipapp.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import GUARD_PROGRAM, GUARD_STATE, ProbeResult, probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import atomic_write, kubelet_processes, read_regular_file
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import HistoryError, history_path, read_history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles, under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import lock_path, node_lock
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.machine_state import MEMORY
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.metrics import render_metrics, write_metrics
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError, describe_bytes, parse_quantity
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.procedure import RepairError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.repair import repair_node
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.topology import BOOT_ID, read_boot_id, record_topology

__all__ = ["PROGRAM", "GUARD_STATE", "BOOT_ID", "DEFAULT_TEXTFILE_DIR", "GuardTimeout", "read_boot_id", "main"]

PROGRAM = GUARD_PROGRAM
DEFAULT_TEXTFILE_DIR = "/var/lib/node_exporter/textfile_collector"
DEFAULT_TIME_LIMIT = 20.0
_NAME = "numa-drift-guard"


class GuardTimeout(Exception):
    """The guard's own time limit passed: give up, touching nothing."""


@dataclass
class Decision:
    verdict: str
    action: str
    message: str


def _read_state(root: str) -> Dict[str, Any]:
    try:
        record = load_json(read_regular_file(under_root(root, GUARD_STATE, follow=False), 64 * 1024).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _write_state(root: str, record: Dict[str, Any], timeout: float, untouched: Optional[ProbeResult] = None) -> None:
    """Write this boot's record under the node lock: a writer holding that lock removes the temporary
    files of ours it finds in the state directory as a killed run's leftovers, this write's included. On a boot the guard
    did not repair (``untouched``), the CPU topology record too, when the CPU manager's part is a good state (a repair
    records it itself)."""
    path = under_root(root, GUARD_STATE, follow=False)
    with node_lock(lock_path(root), timeout):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode("utf-8"), mode=0o644)
        if untouched is not None:
            record_topology(untouched)


def _log(text: str) -> None:
    sys.stderr.write("%s: %s\n" % (_NAME, " ".join(text.split())))
    sys.stderr.flush()


def _drift_text(result: ProbeResult) -> str:
    assessment = result.assessment
    bound = "unknown" if assessment.bound_bytes is None else describe_bytes(assessment.bound_bytes)
    moves = ["node%d %+d bytes (%s)" % (d.node, d.delta(MEMORY), describe_bytes(d.delta(MEMORY)))
             for d in assessment.nodes if d.delta(MEMORY)]
    return "drift %s vs bound %s (%s)" % (", ".join(moves) or "none", bound, assessment.bound_source)


def _kubelet_running(root: str) -> List[str]:
    return kubelet_processes("/proc") if os.path.realpath(root) == "/" else []


def _decide(result: ProbeResult, args: argparse.Namespace, deadline: float) -> Decision:
    """Repair a repairable node only (``drift_within_bound``, ``cpu_default_set_stale``); everything else touches nothing."""
    assessment = result.assessment
    verdict = assessment.verdict
    if verdict in NOTHING_TO_DO:
        return Decision(verdict, "none", assessment.advice)
    if not assessment.repairable:
        return Decision(verdict, "refused", "touched nothing: kubelet decides (%s). What to do: %s"
                        % ("; ".join(assessment.causes_for(verdict)[:1]), assessment.advice))
    running = _kubelet_running(args.root)
    if running:
        return Decision(verdict, "refused", "touched nothing: kubelet is already running (%s)" % ", ".join(running))
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise GuardTimeout()
    signal.setitimer(signal.ITIMER_REAL, 0)  # the repair is bounded by its lock timeout; never cut a write short
    outcome = repair_node(result, by="guard", dry_run=args.dry_run, loop_max_repairs=args.loop_max_repairs,
                          loop_window_hours=args.loop_window_hours, lock_timeout=max(0.1, remaining))
    advice = {
        "repaired": "none needed: kubelet starts with the repaired checkpoint",
        "loop_guard": "a person must look: the drift keeps coming back",
        "dry_run": "run without --dry-run (guard_dry_run: false) to repair",
    }.get(outcome.action, assessment.advice)
    return Decision(verdict, outcome.action, "%s. Advice: %s" % (outcome.message, advice))


def _alarm(_signum: int, _frame: object) -> None:
    raise GuardTimeout()


def _history(root: str) -> List[Dict[str, Any]]:
    try:
        return read_history(history_path(root))
    except HistoryError:
        return []


def _refresh_metrics(result: Optional[ProbeResult], textfile_dir: str, root: str, verdict: Optional[str], started: float) -> None:
    if result is None:
        return
    text = render_metrics(result.assessment, _history(root), time.time(), time.monotonic() - started, verdict)
    try:
        path = write_metrics(textfile_dir, text)
    except OSError as error:
        _log("metrics: could not write %s: %s" % (textfile_dir, error))
        return
    _log("metrics: wrote %s" % path)


def _run(args: argparse.Namespace, started: float, deadline: float) -> None:
    root = args.root
    textfile_dir = under_root(root, args.textfile_dir)
    boot_id = read_boot_id(root)
    state = _read_state(root)
    same_boot = boot_id is not None and state.get("boot_id") == boot_id
    result: Optional[ProbeResult] = None
    try:
        result = probe(HostFiles(root), drift_bound=args.drift_bound)
        if same_boot:
            _log("boot %s already handled (%s, %s): only the metrics are refreshed; verdict now %s"
                 % (boot_id, state.get("verdict"), state.get("action"), result.assessment.verdict))
            _refresh_metrics(result, textfile_dir, root, state.get("verdict"), started)
            return
        decision = _decide(result, args, deadline)
    except GuardTimeout:
        signal.setitimer(signal.ITIMER_REAL, 0)
        decision = Decision(result.assessment.verdict if result else "unknown", "timeout",
                            "gave up after the time limit of %g s, touching nothing" % args.time_limit)
    except (RepairError, OSError, QuantityError) as error:
        signal.setitimer(signal.ITIMER_REAL, 0)
        decision = Decision(result.assessment.verdict if result else "unknown", "error",
                            "%s; kubelet starts and decides" % getattr(error, "message", error))
    signal.setitimer(signal.ITIMER_REAL, 0)
    detail = _drift_text(result) if result else "no probe"
    _log("boot %s: verdict %s; %s; action %s: %s" % (boot_id or "unknown", decision.verdict, detail, decision.action, decision.message))
    record = {"boot_id": boot_id, "verdict": decision.verdict, "action": decision.action, "message": decision.message,
              "time": time.time(), "duration_seconds": round(time.monotonic() - started, 6)}
    try:
        _write_state(root, record, max(deadline - time.monotonic(), 1.0), result if decision.action in ("none", "refused") else None)
    except OSError as error:
        _log("could not record this boot in %s: %s" % (under_root(root, GUARD_STATE, follow=False), error))
    _refresh_metrics(result, textfile_dir, root, decision.verdict if result else None, started)


def _bound(text: str) -> str:
    if text not in ("auto", "off"):
        try:
            parse_quantity(text)
        except QuantityError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=_NAME, description="Repair kubelet's memory manager checkpoint at the first "
                                     "kubelet start of a boot when its NUMA drift is within the bound (nodeops.numa_drift).")
    parser.add_argument("--root", default="/", help="the node's root (default /)")
    parser.add_argument("--textfile-dir", default=DEFAULT_TEXTFILE_DIR, help="node_exporter textfile directory, under --root")
    parser.add_argument("--drift-bound", default="auto", type=_bound, help="auto, off or a quantity such as 128Mi")
    parser.add_argument("--dry-run", action="store_true", help="decide and report, touch no checkpoint")
    parser.add_argument("--loop-max-repairs", type=int, default=3, help="loop guard: repairs allowed in the window")
    parser.add_argument("--loop-window-hours", type=float, default=24, help="loop guard: window in hours")
    parser.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, help="seconds before giving up (default 20)")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """The program; 0 always after the arguments were understood (2 for bad usage)."""
    started = time.monotonic()
    try:
        args = _parser().parse_args(argv)
    except SystemExit as error:
        return 0 if error.code == 0 else 2
    deadline = started + args.time_limit
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        if args.time_limit <= 0:
            raise GuardTimeout()
        signal.setitimer(signal.ITIMER_REAL, args.time_limit)
        _run(args, started, deadline)
    except GuardTimeout:
        _log("gave up after the time limit of %g s, touching nothing" % args.time_limit)
    except Exception as error:  # pylint: disable=broad-except  # never keep kubelet from starting
        _log("unexpected error, nothing more was done: %r" % (error,))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return 0
