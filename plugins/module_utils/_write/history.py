# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node's repair history and the loop guard, shared by the module, the role and the guard.

One file, ``<root>/var/lib/nodeops-numa-drift/history.json`` by default::

    {"repairs": [{"time": 1796205300.5, "at": "2026-12-02T10:15:00Z", "action": "repaired",
                  "by": "guard", "verdict_before": "drift_within_bound",
                  "backup_file": "/var/lib/nodeops-numa-drift/backups/...", "summary": "..."}]}

``time`` is the UNIX time of the write, ``by`` who wrote (``module``, ``role``, ``guard``;
entries the role wrote before ``by`` existed have none). The loop guard counts the entries
of the window whose ``action`` is a repair attempt: everything except ``restored`` and
``sidelined``, so the role's own ``rolled_back``/``failed`` entries (a repair that did not
stick) count. A drift that comes back at every boot, or a repair kubelet does not accept,
stops after ``max_repairs`` repairs in ``window_hours`` and needs a person.

An entry is written *before* the checkpoint changes, marked ``"pending": {"checkpoint": <path>,
"sha256_before": <SHA-256 of its bytes then, or null when absent>}``, and settled (the mark
removed, or the entry dropped) once the write is done, so a run killed at any point leaves a
true history: :func:`settled` drops a pending entry whose checkpoint still holds the bytes it
had before (killed before the rename: nothing was written) and completes every other one
(the write happened). Writers settle under the node lock before anything else; until then a
pending entry counts for the loop guard like a completed one.
Pure functions except :func:`read_history` and :func:`write_history`. Stdlib only.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.files import atomic_write, read_regular_file
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.lock import STATE_DIR

__all__ = [
    "HISTORY_FILE",
    "NOT_COUNTED",
    "HISTORY_KEEP",
    "HistoryError",
    "history_path",
    "read_history",
    "history_in",
    "parse_history",
    "recent_repairs",
    "loop_guard_message",
    "new_entry",
    "last_write_backups",
    "pending_entry",
    "settled",
    "has_pending",
    "appended",
    "write_history",
]

HISTORY_FILE = STATE_DIR + "/history.json"
NOT_COUNTED = ("restored", "sidelined")  # not repair attempts: the loop guard ignores them
HISTORY_KEEP = 100  # entries of the window kept, at most (as the role always did)
_MAX_HISTORY_BYTES = 4 * 1024 * 1024


class HistoryError(ValueError):
    """The history file exists but cannot be read or is not a history: the loop guard cannot decide."""


def history_path(root: str) -> str:
    return under_root(root, HISTORY_FILE, follow=False)


def parse_history(raw: bytes, path: str) -> List[Dict[str, Any]]:
    """The entries of a history file's bytes; :class:`HistoryError` naming ``path`` when malformed."""
    try:
        document = load_json(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise HistoryError("the repair history %s is not valid JSON (%s): delete it to clear the loop guard" % (path, error)) from None
    repairs = document.get("repairs", []) if isinstance(document, dict) else None
    if not isinstance(repairs, list) or not all(_is_entry(entry) for entry in repairs):
        raise HistoryError(
            'the repair history %s is not {"repairs": [{"time": <number>, ...}, ...]}: delete it to clear the loop guard' % path
        )
    return repairs


def _is_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("time"), (int, float)) and not isinstance(entry.get("time"), bool)


def read_history(path: str) -> List[Dict[str, Any]]:
    """The entries of ``path`` ([] when it does not exist); :class:`HistoryError` when it cannot be used."""
    return _entries(lambda: read_regular_file(path, _MAX_HISTORY_BYTES), path)


def history_in(files: Any, node_path: str) -> List[Dict[str, Any]]:
    """:func:`read_history` through the engine's node files (``files``: a ``NodeFiles``, the controller's view of the
    node reader's answer): the same limit, a symbolic link refused as not a regular file."""
    return _entries(lambda: files.read_bytes(node_path, _MAX_HISTORY_BYTES), node_path)


def _entries(read: Callable[[], bytes], path: str) -> List[Dict[str, Any]]:
    try:
        raw = read()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise HistoryError("cannot read the repair history: %s" % error) from None
    return parse_history(raw, path)


def recent_repairs(entries: List[Dict[str, Any]], window_hours: float, now: float) -> List[Dict[str, Any]]:
    """The repair attempts of the last ``window_hours`` (the ones the loop guard counts)."""
    start = now - float(window_hours) * 3600
    return [entry for entry in entries if entry["time"] >= start and entry.get("action") not in NOT_COUNTED]


def loop_guard_message(
    entries: List[Dict[str, Any]], max_repairs: int, window_hours: float, now: float, path: str
) -> Optional[str]:
    """Why another repair is refused, or None when the loop guard lets it through."""
    count = len(recent_repairs(entries, window_hours, now))
    if count < max_repairs:
        return None
    return (
        "loop guard: this node was repaired %d times in the last %g hours (loop_max_repairs=%d), so it is left alone. "
        "A drift that keeps coming back, or a kubelet that keeps failing after the repair, needs a person: read %s "
        "on the node. To allow more repairs, delete that file or raise loop_max_repairs" % (count, window_hours, max_repairs, path)
    )


def new_entry(action: str, by: str, verdict_before: str, backup_file: Optional[str], summary: str, now: float,
              cpu_backup_file: Optional[str] = None) -> Dict[str, Any]:
    """An entry; ``backup_file``: the checkpoint's backup, ``cpu_backup_file``: cpu_manager_state's (a repair that
    rewrote it; the key only then), so that a rollback puts back exactly the files that run wrote."""
    entry = {
        "time": now,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "action": action,
        "by": by,
        "verdict_before": verdict_before,
        "backup_file": backup_file,
        "summary": summary,
    }
    if cpu_backup_file:
        entry["cpu_backup_file"] = cpu_backup_file
    return entry


def last_write_backups(entries: List[Dict[str, Any]]) -> Optional[Tuple[Optional[str], Optional[str]]]:
    """``(checkpoint backup, cpu_manager_state backup)`` of the newest settled repair or sideline that kept a backup,
    None when there is none."""
    for entry in reversed(entries):
        if entry.get("action") in ("repaired", "sidelined") and PENDING not in entry and (entry.get("backup_file") or entry.get("cpu_backup_file")):
            return entry.get("backup_file") or None, entry.get("cpu_backup_file") or None
    return None


PENDING = "pending"


def pending_entry(entry: Dict[str, Any], checkpoint: str, sha256_before: Optional[str]) -> Dict[str, Any]:
    """``entry`` marked as the intent of a write of ``checkpoint`` that held ``sha256_before`` (None: absent)."""
    return dict(entry, **{PENDING: {"checkpoint": checkpoint, "sha256_before": sha256_before}})


def _pending_of(entry: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    pending = entry.get(PENDING)
    return pending if isinstance(pending, dict) and isinstance(pending.get("checkpoint"), str) else None


def settled(entries: List[Dict[str, Any]], digest_of: Callable[[str], Optional[str]]) -> Tuple[List[Dict[str, Any]], bool]:
    """The entries with every pending one settled, and whether anything changed.

    ``digest_of(path)``: the SHA-256 of the checkpoint's bytes now (None when absent). A pending
    entry whose checkpoint still holds its ``sha256_before`` is dropped (nothing was written);
    any other is completed (its write happened, whatever changed the file since).
    """
    result: List[Dict[str, Any]] = []
    changed = False
    for entry in entries:
        if PENDING not in entry:
            result.append(entry)
            continue
        changed = True
        pending = _pending_of(entry)
        if pending is not None and digest_of(pending["checkpoint"]) == pending.get("sha256_before"):
            continue
        result.append({key: value for key, value in entry.items() if key != PENDING})
    return result, changed


def has_pending(entries: List[Dict[str, Any]]) -> bool:
    return any(PENDING in entry for entry in entries)


def appended(entries: List[Dict[str, Any]], entry: Dict[str, Any], window_hours: float, now: float) -> List[Dict[str, Any]]:
    """A bounded history: the entries of the window, at most the last ``HISTORY_KEEP``, then ``entry``."""
    start = now - float(window_hours) * 3600
    kept = [old for old in entries if old["time"] >= start]
    return kept[-HISTORY_KEEP:] + [entry]


def write_history(path: str, entries: List[Dict[str, Any]]) -> None:
    """Write the history through the one verified write path (directory 0700, file 0600)."""
    os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
    text = json.dumps({"repairs": entries}, indent=4, sort_keys=True) + "\n"
    atomic_write(path, text.encode("utf-8"))
