# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate playbook's first pass: which nodes need the procedure, from one probe each.

As kured and medik8s do, only the nodes that need it go through the procedure. A node whose checkpoint needs
nothing (the role's ``nothing`` branch) leaves the rollout after its probe with the outcome its procedure would
record, unless an earlier run of ours left its mark on the Node (one Node list answers that for the fleet;
``_cordon.earlier_run`` decides, as the procedure's own check does). Every other node (work to do, a probe that
failed, a node not reached) goes through the procedure in inventory order, where it is probed again.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon


def settled_outcome(triage: Mapping[str, Any], nodes: Optional[Mapping[str, Mapping[str, Any]]], failure: str,
                    prefix: str) -> Optional[Dict[str, Any]]:
    """The node's final outcome when it needs nothing, else None (it goes through the procedure).

    ``triage``: the registered result of the first pass's plan (no ``plan`` when the probe failed or did not reach
    the node); ``nodes``: the cluster's Nodes by name (None when they could not be listed, ``failure`` says why).
    """
    plan, outcome = triage.get("plan"), triage.get("outcome")
    if not isinstance(plan, Mapping) or not isinstance(outcome, Mapping) or plan.get("branch") != "nothing":
        return None
    if not plan.get("finish_earlier_run"):
        return dict(outcome)
    if nodes is None:
        return _cordon.with_note(outcome, _cordon.UNCHECKED % failure)
    node = nodes.get(str(outcome.get("node")))
    if node is None:
        return _cordon.with_note(outcome, _cordon.UNCHECKED % "no such Node")
    return None if _cordon.earlier_run(node, prefix)["ours"] else dict(outcome)


def needs_earlier_run_check(triages: Sequence[Mapping[str, Any]]) -> bool:
    return any(isinstance(t.get("plan"), Mapping) and t["plan"].get("finish_earlier_run") for t in triages)


def split(hosts: Sequence[str], triages: Sequence[Mapping[str, Any]], nodes: Optional[Mapping[str, Mapping[str, Any]]],
          failure: str, prefix: str) -> Tuple[List[str], Dict[str, Dict[str, Any]]]:
    """(the hosts that need the procedure, in inventory order; host -> final outcome of the others)."""
    work: List[str] = []
    settled: Dict[str, Dict[str, Any]] = {}
    for host, triage in zip(hosts, triages):
        outcome = settled_outcome(triage if isinstance(triage, Mapping) else {}, nodes, failure, prefix)
        if outcome is None:
            work.append(host)
        else:
            settled[host] = outcome
    return work, settled


def summary(hosts: Sequence[str], work: Sequence[str], settled: Mapping[str, Mapping[str, Any]]) -> str:
    """One line: how many nodes need nothing (by verdict) and which need the procedure."""
    verdicts: Dict[str, int] = {}
    for outcome in settled.values():
        verdict = str(outcome.get("verdict_before") or "unknown")
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    nothing = ", ".join("%s %d" % item for item in sorted(verdicts.items()))
    line = "%d of %d nodes need nothing%s" % (len(settled), len(hosts), " (%s)" % nothing if nothing else "")
    if not work:
        return line + "; no node needs the procedure"
    shown = ", ".join(work[:20]) + (", and %d more" % (len(work) - 20) if len(work) > 20 else "")
    return line + "; %d go through the procedure: %s" % (len(work), shown)
