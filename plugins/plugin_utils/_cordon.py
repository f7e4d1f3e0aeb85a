# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cordon ownership on a Node: who cordoned it, and the merge patches that change it.

A Node someone else cordoned is never uncordoned here. Our mark is the annotation
``<prefix>/cordoned-by: nodeops.numa_drift``, written in the same merge patch as the cordon and
removed in the same patch as the uncordon, each carrying the resourceVersion it was decided on
(a concurrent writer makes the API answer 409 and the decision is made again on a fresh read).
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

MARKER = "nodeops.numa_drift"
UNCHECKED = "could not check the Node for an unfinished earlier run: %s"


def annotations(node: Mapping[str, Any]) -> Dict[str, str]:
    return dict((node.get("metadata") or {}).get("annotations") or {})


def unschedulable(node: Mapping[str, Any]) -> bool:
    return bool((node.get("spec") or {}).get("unschedulable"))


def ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def ownership(node: Mapping[str, Any], prefix: str) -> Dict[str, bool]:
    """cordoned_before: unschedulable now; cordoned_by_us: unschedulable with our mark."""
    before = unschedulable(node)
    return {"cordoned_before": before, "cordoned_by_us": before and annotations(node).get(prefix + "/cordoned-by") == MARKER}


def node_state(node: Optional[Mapping[str, Any]], prefix: str) -> Dict[str, Any]:
    """What the fleet report shows of a Node: its Ready condition, and whether it is cordoned and by whom."""
    if node is None:
        return {"found": False, "ready": None, "cordoned": False, "cordoned_by": None}
    conditions = (node.get("status") or {}).get("conditions") or []
    status = next((str(c.get("status")) for c in conditions if c.get("type") == "Ready"), "Unknown")
    owner = ownership(node, prefix)
    by = None if not owner["cordoned_before"] else ("us" if owner["cordoned_by_us"] else "someone else")
    return {"found": True, "ready": status, "cordoned": owner["cordoned_before"], "cordoned_by": by}


def _patch(node: Mapping[str, Any], marks: Mapping[str, Optional[str]], schedulable: Optional[bool]) -> Dict[str, Any]:
    patch: Dict[str, Any] = {"metadata": {"resourceVersion": (node.get("metadata") or {}).get("resourceVersion"), "annotations": dict(marks)}}
    if schedulable is not None:
        patch["spec"] = {"unschedulable": not schedulable}
    return patch


def cordon_patch(node: Mapping[str, Any], prefix: str, reason: Optional[str]) -> Optional[Dict[str, Any]]:
    """The patch that cordons a schedulable Node with our mark (and reason); None when already cordoned."""
    owner = ownership(node, prefix)
    if owner["cordoned_before"]:
        if owner["cordoned_by_us"] and reason and annotations(node).get(prefix + "/reason") != reason:
            return _patch(node, {prefix + "/reason": reason}, None)
        return None
    marks = {prefix + "/cordoned-by": MARKER}
    if reason:
        marks[prefix + "/reason"] = reason
    return _patch(node, marks, schedulable=False)


def uncordon_patch(node: Mapping[str, Any], prefix: str, cordoned_by_us: bool, last_outcome: str) -> Dict[str, Any]:
    """Ready again: uncordon only what we cordoned and drop our marks, in one patch; always note the outcome."""
    marks: Dict[str, Optional[str]] = {prefix + "/last-outcome": last_outcome}
    if cordoned_by_us:
        marks.update({prefix + "/cordoned-by": None, prefix + "/reason": None})
        return _patch(node, marks, schedulable=True)
    return _patch(node, marks, None)


def earlier_run(node: Mapping[str, Any], prefix: str) -> Dict[str, Any]:
    """What an earlier run of ours left on a Node whose checkpoint needs nothing now."""
    marks = annotations(node)
    if marks.get(prefix + "/cordoned-by") != MARKER:
        return {"ours": False}
    reason = marks.get(prefix + "/reason") or ""
    cordoned = unschedulable(node)
    return {"ours": True, "reason": reason, "cordoned": cordoned, "finish": not reason and (ready(node) or not cordoned)}


def earlier_run_message(state: Mapping[str, Any], name: str, prefix: str) -> str:
    if state.get("reason"):
        return ("an earlier run left this node cordoned on purpose: %s. When it is healthy: kubectl uncordon %s && kubectl annotate"
                " node %s %s/cordoned-by- %s/reason-" % (state["reason"], name, name, prefix, prefix))
    if state.get("finish"):
        return "finished an earlier repair: the Node is Ready and was uncordoned" if state.get("cordoned") else \
            "removed the stale annotation %s/cordoned-by" % prefix
    return "an earlier repair cordoned this node and it is not Ready yet, so it stays cordoned"


def with_note(outcome: Mapping[str, Any], note: str) -> Dict[str, Any]:
    """The remediate role's outcome record with a note from the Node appended to its message."""
    updated = dict(outcome)
    if note:
        updated["message"] = "%s; %s" % (updated.get("message", ""), note)
    return updated
