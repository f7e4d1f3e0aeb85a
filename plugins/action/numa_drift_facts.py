# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.numa_drift_facts: the probe module, one run per host, and advice naming the host.

The module runs exactly as ``ansible.builtin.normal`` runs it (one AnsiballZ payload, one round
trip). The node does not know its inventory name, so a repairable node's advice says ``NODE``;
this plugin puts the host's inventory name in its place. Unknown options are refused here, before
anything is sent.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ansible.plugins.action import ActionBase
from ansible.utils.vars import merge_hash

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import REPAIRABLE, remediate_advice
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import NODE_OPTIONS_SPEC

MODULE = "nodeops.numa_drift.numa_drift_facts"


class ActionModule(ActionBase):
    """The probe module, then the host's name in a repairable node's advice."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(NODE_OPTIONS_SPEC)

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        wrap_async = self._task.async_val
        # as ansible.builtin.normal runs a module
        result = merge_hash(result, self._execute_module(module_name=MODULE, module_args=self._task.args, task_vars=task_vars,
                                                         wrap_async=wrap_async))
        self._advise_for(result, task_vars.get("inventory_hostname"))
        if not wrap_async:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    @staticmethod
    def _advise_for(result: Dict[str, Any], host: Any) -> None:
        """A repairable node's advice names the remediate playbook limited to this host (the node only knows "NODE")."""
        facts = result.get("numa_drift")
        if host and isinstance(facts, dict) and facts.get("verdict") == REPAIRABLE:
            facts["advice"] = remediate_advice(str(host))
