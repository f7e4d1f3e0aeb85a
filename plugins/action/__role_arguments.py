# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__role_arguments: the remediate role's variables checked before the role runs,
one short line per mistake (plugin_utils/_role_args.py says why Ansible's own check is not enough)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._role_args import role_options, role_variable_problems

ARGUMENT_SPEC = {"entry_point": {"type": "str", "default": "main", "choices": ["main", "probe", "rollback"]}}


class ActionModule(ActionBase):
    """Reads the role's meta/argument_specs.yml here; nothing runs on the node."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        options = role_options(args["entry_point"])
        values = self._templar.template({name: task_vars[name] for name in options if name in task_vars})
        problems = role_variable_problems(options, values)
        if problems:
            return dict(result, failed=True, msg="variables of the remediate role: %s" % "; ".join(problems))
        return dict(result, changed=False, msg="the remediate role's variables fit its argument spec")
