# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test callback: per host, how many tasks of the remediate role ran (and were skipped).

Enabled by the fleet tests with ANSIBLE_CALLBACK_PLUGINS pointing here, ANSIBLE_CALLBACKS_ENABLED=task_counts
and NUMA_DRIFT_TASK_COUNTS=<file>: writes {"host": {"executed": n, "skipped": n, "tasks": [names]}} at the end.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: task_counts
type: aggregate
short_description: Count the remediate role's tasks per host (tests only)
description:
  - Writes a JSON file named by E(NUMA_DRIFT_TASK_COUNTS) at the end of the run.
requirements:
  - enable in configuration
"""

import json
import os
from typing import Any, Dict

from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "task_counts"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.counts: Dict[str, Dict[str, Any]] = {}

    @staticmethod
    def _in_role(task: Any) -> bool:
        role = getattr(task, "_role", None)
        return role is not None and role.get_name().endswith("remediate")

    def _count(self, result: Any, key: str) -> None:
        task = result._task  # pylint: disable=protected-access
        if not self._in_role(task):
            return
        host = result._host.get_name()  # pylint: disable=protected-access
        entry = self.counts.setdefault(host, {"executed": 0, "skipped": 0, "tasks": []})
        entry[key] += 1
        if key == "executed":
            entry["tasks"].append(task.get_name())

    def v2_runner_on_ok(self, result: Any) -> None:
        self._count(result, "executed")

    def v2_runner_on_failed(self, result: Any, ignore_errors: bool = False) -> None:
        self._count(result, "executed")

    def v2_runner_on_unreachable(self, result: Any) -> None:
        self._count(result, "executed")

    def v2_runner_on_skipped(self, result: Any) -> None:
        self._count(result, "skipped")

    def v2_playbook_on_stats(self, stats: Any) -> None:
        path = os.environ.get("NUMA_DRIFT_TASK_COUNTS")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(self.counts, handle, indent=1, sort_keys=True)
