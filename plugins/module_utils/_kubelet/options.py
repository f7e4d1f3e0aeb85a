# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The operator's overrides of kubelet's settings (``kubelet_flags``, ``policy``, ``reserved_memory``), checked
before anything is read: a value of the wrong shape is the operator's mistake, not the node's, so it fails the task
naming the option and what it takes (:class:`OptionError`) instead of becoming a verdict about the node.

Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, List, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import OptionError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.reserved import parse_reserved_memory_override

__all__ = ["OptionError", "check_overrides", "given"]

RESERVED_MEMORY_TAKES = ("a mapping from NUMA node to limits ({0: {memory: 1Gi}}) or a list as kubelet's reservedMemory "
                         "([{numaNode: 0, limits: {memory: 1Gi}}])")
KUBELET_FLAGS_TAKES = "kubelet's command line as a string or a list of strings"
POLICY_TAKES = "a string (Static, None or BestEffort)"
_SHOWN = 60


def given(value: Any) -> str:
    """What was given, in YAML's words: ``an integer (5)``, ``a mapping``; a scalar's value is shown, cut short."""
    kind = kind_of(value)
    if isinstance(value, (str, int, float)):
        text = repr(value) if isinstance(value, str) else str(value)
        return "%s (%s)" % (kind, text if len(text) <= _SHOWN else text[:_SHOWN] + "...")
    return kind


def _flags_problem(flags: Any) -> Optional[str]:
    if isinstance(flags, str):
        return None
    if isinstance(flags, (list, tuple)):
        wrong = [item for item in flags if not isinstance(item, str)]
        if not wrong:
            return None
        return "kubelet_flags must be %s; item %d is %s" % (KUBELET_FLAGS_TAKES, list(flags).index(wrong[0]) + 1, given(wrong[0]))
    return "kubelet_flags must be %s, got %s" % (KUBELET_FLAGS_TAKES, given(flags))


def _reserved_memory_problems(value: Any) -> List[str]:
    if not isinstance(value, (Mapping, list)):
        return ["reserved_memory must be %s, got %s" % (RESERVED_MEMORY_TAKES, given(value))]
    _entries, problems = parse_reserved_memory_override(value)
    # The list form's problems name kubelet's field (reservedMemory[1]); the option is named first.
    return [problem if problem.startswith("reserved_memory") else "reserved_memory: %s" % problem for problem in problems]


def check_overrides(kubelet_flags: Any = None, policy: Any = None, reserved_memory: Any = None) -> None:
    """Raise :class:`OptionError` when an override given (not ``None``) is not of the shape kubelet's setting has."""
    problems = []
    if kubelet_flags is not None:
        problem = _flags_problem(kubelet_flags)
        if problem:
            problems.append(problem)
    if policy is not None and not isinstance(policy, str):
        problems.append("policy must be %s, got %s" % (POLICY_TAKES, given(policy)))
    if reserved_memory is not None:
        problems.extend(_reserved_memory_problems(reserved_memory))
    if problems:
        raise OptionError("; ".join(problems))
