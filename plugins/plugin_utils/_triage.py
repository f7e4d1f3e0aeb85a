# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate playbook's first pass: which nodes need the procedure, from one probe each.

As kured and medik8s do, only the nodes that need it go through the procedure. A node whose checkpoint needs
nothing (the role's ``nothing`` branch) leaves the rollout after its probe with the outcome its procedure would
record, unless an earlier run of ours left its mark on the Node (one Node list answers that for the fleet;
``_cordon.earlier_run`` decides, as the procedure's own check does). A node the probe could not reach leaves it too,
reported as unreachable with nothing done: the canary is the first *reachable* node that needs work. Every other
node (work to do, a probe that failed) goes through the procedure in inventory order, where it is probed again.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon


UNREACHED = "unreachable: %s. Nothing was done on this node: the rollout went on without it."


def unreached_outcome(probe: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """The outcome of a node the first pass's probe could not reach (``probe``: its registered result), else None."""
    if not probe.get("unreachable"):
        return None
    why = str(probe.get("msg") or "?").strip().rstrip(".")
    # No "node": the report names it from remediate_node_name, as every other row.
    return {"action": "unreachable", "message": UNREACHED % why.removeprefix("Task failed: ")}  # ansible-core 2.19+ heads it so


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


def split(hosts: Sequence[str], triages: Sequence[Mapping[str, Any]], probes: Sequence[Mapping[str, Any]],
          nodes: Optional[Mapping[str, Mapping[str, Any]]], failure: str, prefix: str) -> Tuple[List[str], Dict[str, Dict[str, Any]]]:
    """(the hosts that need the procedure, in inventory order; host -> final outcome of the others).

    ``probes``: each host's registered probe result (``unreachable`` when the probe did not reach it)."""
    work: List[str] = []
    settled: Dict[str, Dict[str, Any]] = {}
    for host, triage, probe in zip(hosts, triages, probes):
        outcome = unreached_outcome(probe) or settled_outcome(triage, nodes, failure, prefix)
        if outcome is None:
            work.append(host)
        else:
            settled[host] = outcome
    return work, settled


def unreached(settled: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """The hosts the first pass could not reach, in the order given."""
    return [host for host, outcome in settled.items() if outcome.get("action") == "unreachable"]


def shown(hosts: Sequence[str], most: int = 20) -> str:
    """The first ``most`` hosts, and how many more (the run's one-line summaries)."""
    return ", ".join(hosts[:most]) + (", and %d more" % (len(hosts) - most) if len(hosts) > most else "")


def summary(hosts: Sequence[str], work: Sequence[str], settled: Mapping[str, Mapping[str, Any]]) -> str:
    """One line: how many nodes need nothing (by verdict), which could not be reached, which need the procedure."""
    verdicts: Dict[str, int] = {}
    lost = unreached(settled)
    for host, outcome in settled.items():
        if host not in lost:
            verdict = str(outcome.get("verdict_before") or "unknown")
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
    nothing = ", ".join("%s %d" % item for item in sorted(verdicts.items()))
    line = "%d of %d nodes need nothing%s" % (len(settled) - len(lost), len(hosts), " (%s)" % nothing if nothing else "")
    if lost:
        line += "; %d could not be reached and are left out (reported as unreachable): %s" % (len(lost), shown(lost))
    if not work:
        return line + "; no node needs the procedure"
    return line + "; %d go through the procedure: %s" % (len(work), shown(work))
