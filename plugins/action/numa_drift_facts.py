# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.numa_drift_facts: run the probe from the node's bytecode cache when it can.

A node that ran the probe before holds the engine's compiled code (``module_utils/_bytecode.py``).
This plugin first sends the small ``nodeops.numa_drift.__cached_run`` module with a manifest (the
probe and every engine file it imports, by source digest) in its environment: on a node whose
cache holds them, the probe runs from there without the engine being sent or compiled. When the
node answers that it could not (``miss``: not cached yet, ``unusable``/``off``: it cannot cache),
the probe module itself runs, exactly as without this plugin, and fills the cache. A host whose
cache is ``unusable`` or ``off`` is remembered for the rest of the play (a host fact), so it is
not asked again; the host variable ``nodeops_numa_drift_bytecode_cache: off`` skips the attempt
altogether. The probe only reads, so running it after a miss is harmless.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode
from ansible_collections.nodeops.numa_drift.plugins.module_utils._drift import REPAIRABLE, remediate_advice
from ansible_collections.nodeops.numa_drift.plugins.module_utils._module_args import NODE_OPTIONS_SPEC
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import set_host_facts
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._manifest import module_manifest

MODULE = "nodeops.numa_drift.numa_drift_facts"
CACHED_RUN = "nodeops.numa_drift.__cached_run"
CANNOT_CACHE = ("unusable", "off")


class ActionModule(ActionBase):
    """The probe from the node's bytecode cache, else the probe module itself."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(NODE_OPTIONS_SPEC)  # cached_run accepts any option: unknown ones are refused here

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        wrap_async = self._task.async_val
        cached: Dict[str, Any] = {}
        outcome = "off" if wrap_async else self._cache_state(task_vars)
        if outcome not in CANNOT_CACHE:
            cached = self._run_cached(task_vars)
            outcome = cached.get(_bytecode.OUTCOME_KEY)
        if outcome is None:
            result = merge_hash(result, cached)
        else:  # as ansible.builtin.normal runs a module
            result = merge_hash(result, self._execute_module(module_name=MODULE, module_args=self._task.args, task_vars=task_vars,
                                                             wrap_async=wrap_async))
        self._advise_for(result, task_vars.get("inventory_hostname"))
        if outcome in CANNOT_CACHE and not wrap_async:
            set_host_facts(self, result, {_bytecode.OUTCOME_KEY: outcome})
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    @staticmethod
    def _advise_for(result: Dict[str, Any], host: Any) -> None:
        """A repairable node's advice names the remediate playbook limited to this host (the node only knows "NODE")."""
        facts = result.get("numa_drift")
        if host and isinstance(facts, dict) and facts.get("verdict") == REPAIRABLE:
            facts["advice"] = remediate_advice(str(host))

    @staticmethod
    def _cache_state(task_vars: Dict[str, Any]) -> Any:
        """``off`` from the inventory (``nodeops_numa_drift_bytecode_cache: off``), or what this host answered before."""
        facts = task_vars.get("ansible_facts") or {}
        state = task_vars.get(_bytecode.OUTCOME_KEY, facts.get(_bytecode.OUTCOME_KEY))
        return "off" if state is False or str(state).lower() in _bytecode.OFF else state

    def _run_cached(self, task_vars: Dict[str, Any]) -> Dict[str, Any]:
        manifest = _bytecode.format_manifest(module_manifest(MODULE.rsplit(".", 1)[1]))
        saved = self._task.environment
        extra = {_bytecode.MANIFEST_VARIABLE: manifest}
        self._task.environment = (list(saved) if isinstance(saved, list) else ([saved] if saved else [])) + [extra]
        try:
            return self._execute_module(module_name=CACHED_RUN, module_args=self._task.args, task_vars=task_vars,
                                        ignore_unknown_opts=True)
        finally:
            self._task.environment = saved
