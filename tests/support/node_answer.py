# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's files both ways: on the node (``HostFiles``) and on the controller, as the node reader answered them.

:func:`answered` reads a tree as the probe's action plugin does (the node reader with the probe's read plan, the
answer through JSON and the controller's checks, then one more read per path the engine still lacked) and gives
the engine's :class:`AnsweredFiles` of it with the count of reads; :func:`both_ways` runs one function of a node's
files on each and returns both outcomes (a value, or the exception's type and words).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.answered_files import AnsweredFiles, NotRead, checked_entries
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles, NodeFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader import read_plan as node_reader
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import read_plan
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot

MAX_READS = 4  # as the action plugin (plugins/action/numa_drift_facts.py)


def sent(root: str, rules: List[Dict[str, Any]], follows: Mapping[str, Any]) -> Dict[str, Dict[str, Any]]:
    """What the node reader answers for ``rules``, as it crosses (JSON) and as the controller checks it."""
    return checked_entries(json.loads(json.dumps(node_reader(root, rules, follows))))


def outcome(action: Callable[[NodeFiles], Any], files: NodeFiles) -> Any:
    """``action(files)``, or ``(type name, words)`` of what it raised (what a caller of the engine would see)."""
    try:
        return action(files)
    except NotRead:
        raise
    except Exception as error:  # pylint: disable=broad-except  # compared, not handled
        return (type(error).__name__, str(error))


def answered(root: str, action: Callable[[NodeFiles], Any], arguments: Optional[Mapping[str, Any]] = None,
             rules: Optional[List[Dict[str, Any]]] = None, max_reads: int = MAX_READS) -> Tuple[Any, int]:
    """``(outcome of action on the answered files, reads)``: ``rules`` (by default the probe's read plan for
    ``arguments``) read on the node, and each path the engine still lacked read once more."""
    plan, follows = read_plan(arguments or {})
    entries: Dict[str, Dict[str, Any]] = {}
    for reads in range(1, max_reads + 1):
        for key, records in sent(root, plan if rules is None or reads > 1 else rules, follows).items():
            entries.setdefault(key, {}).update(records)
        try:
            return outcome(action, AnsweredFiles(root, entries)), reads
        except NotRead as missing:
            plan = rules = _snapshot.missed_rules(missing)[0]  # as the action plugin does
    raise AssertionError("the answers still lack what the engine reads after %d reads under %s" % (max_reads, root))


def both_ways(root: str, action: Callable[[NodeFiles], Any], rules: Optional[List[Dict[str, Any]]] = None) -> Tuple[Any, Any]:
    """``(on the node, on the controller)``: ``action`` of the node's files under ``root`` each way."""
    return outcome(action, HostFiles(root)), answered(root, action, rules=rules or [], max_reads=100)[0]


def facts_of(drift_bound: str = "auto", **options: Any) -> Callable[[NodeFiles], Any]:
    """The probe's ``numa_drift`` facts of a node's files (as they cross to the task's result: through JSON)."""
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts  # pylint: disable=import-outside-toplevel
    from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe  # pylint: disable=import-outside-toplevel

    return lambda files: json.loads(json.dumps(assessment_facts(probe(files, drift_bound=drift_bound, **options))))
