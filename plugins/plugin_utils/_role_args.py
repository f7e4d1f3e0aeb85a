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
from ansible.module_utils.common.parameters import DEFAULT_TYPE_VALIDATORS

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.options import given

SPEC_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "roles", "remediate", "meta", "argument_specs.yml")
# What each type of an argument spec takes, in a user's words ("raw" takes anything).
TYPE_WORDS = {
    "str": "a string",
    "path": "a path (a string)",
    "int": "an integer",
    "float": "a number",
    "bool": "a boolean (true or false)",
    "list": "a list",
    "dict": "a mapping",
}


def role_options(entry_point: str = "main", spec_file: str = SPEC_FILE) -> Dict[str, Dict[str, Any]]:
    """The options of one entry point of the role's argument spec."""
    with open(spec_file, encoding="utf-8") as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    if entry_point not in specs:
        raise KeyError("the remediate role has no entry point %r (it has %s)" % (entry_point, ", ".join(sorted(specs))))
    return dict(specs[entry_point].get("options") or {})


def _type_problem(name: str, option: Mapping[str, Any], value: Any) -> List[str]:
    wanted = option.get("type", "str")
    if wanted not in TYPE_WORDS or value is None:
        return []
    if wanted in ("str", "path") and not isinstance(value, str) and isinstance(value, (Mapping, list, tuple)):
        return ["%s must be %s, got %s" % (name, TYPE_WORDS[wanted], given(value))]  # Ansible would take its Python text
    try:
        DEFAULT_TYPE_VALIDATORS[wanted](value)
    except (TypeError, ValueError):
        return ["%s must be %s, got %s" % (name, TYPE_WORDS[wanted], given(value))]
    return []


def role_variable_problems(options: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> List[str]:
    """One line per variable that does not fit the spec: its name, what it takes, what it got; then Ansible's own
    words for the rest (choices, list elements) of the variables whose type fits."""
    given_values = {name: values[name] for name in options if name in values}
    problems: List[str] = []
    fitting = {}
    for name, value in sorted(given_values.items()):
        mistyped = _type_problem(name, options[name], value)
        problems.extend(mistyped)
        if not mistyped:
            fitting[name] = value
    rules = {name: {key: item for key, item in option.items() if key not in ("description", "default")}
             for name, option in options.items() if name in fitting}
    problems.extend(ArgumentSpecValidator(rules).validate(fitting).error_messages)
    return problems
