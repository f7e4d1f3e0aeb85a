# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate role's variables checked against its own ``meta/argument_specs.yml``, one short line per mistake.

Ansible validates a role's arguments itself before its first task, but a failure prints the role's whole argument
spec with it (``ansible.builtin.validate_argument_spec`` returns ``argument_spec_data``; ansible/ansible#80531), about
8,000 characters for this role, and words a type error as Ansible's Python does (``is of type str and we were unable
to convert to int``). Run before the role (``__role_arguments``), this check fails first with
``remediate_loop_max_repairs must be an integer, got a string ('lots')``; the role's own validation then only ever
sees variables that pass.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping

import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import type_problems

SPEC_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "roles", "remediate", "meta", "argument_specs.yml")


def role_options(entry_point: str = "main", spec_file: str = SPEC_FILE) -> Dict[str, Dict[str, Any]]:
    """The options of one entry point of the role's argument spec."""
    with open(spec_file, encoding="utf-8") as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    if entry_point not in specs:
        raise KeyError("the remediate role has no entry point %r (it has %s)" % (entry_point, ", ".join(sorted(specs))))
    return dict(specs[entry_point].get("options") or {})


def role_variable_problems(options: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> List[str]:
    """One line per variable that does not fit the spec: its name, what it takes, what it got; then Ansible's own
    words for the rest (choices, list elements) of the variables whose type fits."""
    given_values = {name: values[name] for name in options if name in values}
    problems = type_problems(options, given_values)
    fitting = {name: value for name, value in given_values.items() if not type_problems(options, {name: value})}
    rules = {name: {key: item for key, item in option.items() if key not in ("description", "default")}
             for name, option in options.items() if name in fitting}
    problems.extend(ArgumentSpecValidator(rules).validate(fitting).error_messages)
    return problems
