# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's data (report.json, and what report.html draws), as pure functions (controller side).

One row per targeted host, from its ``remediate_outcome`` (the probe's ``numa_drift`` facts inside it):
the signed drift per NUMA node and resource laid out as bars around a zero axis, a short "what happened"
line, the advice once, the pods whose NUMA pinning the checkpoint holds (named from the API when it was
reachable), the boot guard and where kubelet runs; on top, the nodes that need a human, each with the
reason and the next step. The action plugin ``__fleet_report`` is a thin wrapper; it also renders
report.html here (:func:`render_html`), with HTML autoescaping on for every value the template prints.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import jinja2

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO, REPAIRABLE_VERDICTS, remediate_advice

MEMORY = "memory"
FAILED_ACTIONS = ("failed", "rolled_back", "unreachable")
UNREACHABLE = "unreachable"
# The bound line sits at this fraction of the half-track when no drift is larger: room to see "within".
BOUND_HEADROOM = 1.25
# A non-zero drift smaller than this share of the half-track is still drawn this wide (percent of the track).
MIN_BAR_PERCENT = 0.6

NEXT_STEPS = {
    "in_sync": "Nothing to do: kubelet starts with this checkpoint.",
    "no_checkpoint": "Nothing to do: kubelet writes a fresh checkpoint when it starts.",
    "drift_within_bound": ("Only the per-NUMA totals moved, within the bound, and every assignment still fits: "
                           + remediate_advice() + "."),
    "drift_exceeds_bound": ("A real capacity change: find out why the memory moved. If it is known to be benign, set"
                            " remediate_drift_bound; otherwise drain the node and delete the checkpoint (kubelet_mm_checkpoint"
                            " state=absent)."),
    "bound_unknown": ("The bound cannot be derived (kernel image lines in /proc/iomem unreadable or zeroed): probe as root,"
                      " or set remediate_drift_bound explicitly."),
    "hugepages_changed": "Hugepage pools changed: restore the pool sizes, or drain the node and delete the checkpoint.",
    "reserved_changed": "kubelet reservedMemory changed: revert the kubelet configuration, or drain the node and delete the checkpoint.",
    "topology_changed": "The NUMA topology changed: drain the node and delete the checkpoint.",
    "assignments_do_not_fit": "A recorded pod no longer fits its NUMA nodes: drain the node and delete the checkpoint.",
    "kubelet_config_unknown": ("The kubelet configuration could not be found or read (the causes name the file): fix it, or"
                               " pass remediate_kubelet_config or remediate_kubelet_flags, then probe again. Nothing was touched."),
    "kubelet_config_rejected": ("Kubelet refuses its own configuration at start, whatever the checkpoint holds (the causes name"
                                " the value and the file): fix the kubelet configuration and restart kubelet. Do not delete the"
                                " checkpoint: that would not help. Nothing was touched."),
    "kubelet_release_untested": ("The kubelet that will start is of a release outside the tested ones (1.34 to 1.37; the causes name"
                                 " it and where it was read): run a tested release, or set remediate_untested_release=nearest to"
                                 " judge it by the nearest tested release's rules. Nothing was touched."),
    "kubelet_tolerates": "Nothing to do: kubelet has KEP-6232 drift tolerance on and repairs this drift itself.",
    "cpu_manager_unknown": ("Kubelet's CPU manager (started before the memory manager) could not be judged (the causes say why:"
                            " the online CPUs unreadable, an option or gate not modelled). Nothing was touched."),
    "cpu_manager_refuses": ("Kubelet's CPU manager refuses cpu_manager_state (kubelet's error is in the causes): repairing"
                            " memory_manager_state alone would not start kubelet. Evict the pods named, or drain the node, then"
                            " delete cpu_manager_state. Nothing was touched."),
    "cpu_default_set_stale": ("Kubelet's CPU manager refuses cpu_manager_state, whose defaultCpuSet alone is stale: every pinned"
                              " CPU is kept when it is re-derived (and the memory drift beside it, if any, is repaired in the same"
                              " kubelet stop): " + remediate_advice() + "."),
    "cpu_checkpoint_untrusted": ("Kubelet would start, but cpu_manager_state cannot be trusted (the causes say why): drain the"
                                 " node and delete it before any repair. Nothing was touched."),
    "policy_mismatch": "The memory manager policy changed: drain the node and delete the checkpoint, as kubelet requires.",
    "corrupt": "The checkpoint cannot be read: drain the node and delete it.",
    "unsupported_layout": "This checkpoint layout cannot be rewritten safely by this version: drain the node and delete the checkpoint.",
}

NOT_PROCESSED = "not processed: the rollout stopped before this node, or has not reached it yet"
# Actions after which a person must look, whatever the verdict (the message says what to do).
ATTENTION_ACTIONS = FAILED_ACTIONS + ("loop_guard",)
# The page: playbooks/templates/report.html.j2 of this collection.
TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "playbooks", "templates", "report.html.j2")
LOST = ("unreachable: the connection to the node was lost during the run, after it was reached; the node may be cordoned"
        " or kubelet stopped. What to do: look at the node (kubectl get node, systemctl status of the kubelet service),"
        " then run nodeops.numa_drift.remediate again with --limit %s")
# Written before a batch's procedures (the report on disk when the run ends in the middle of them, with no task left).
IN_PROGRESS_HEAD = "unreachable: the run ended during this node's procedure"
IN_PROGRESS = (IN_PROGRESS_HEAD + " (the connection to the node was lost, or the run"
               " was interrupted) and could not say how it ended; the node may be cordoned or kubelet stopped. What to do:"
               " look at the node (kubectl get node, systemctl status of the kubelet service), then run"
               " nodeops.numa_drift.remediate again with --limit %s")
# %s: the playbook to run again (remediate, or probe for the probe's report), then the host.
UNREACHABLE_ADVICE = (" What to do: check that the node is up and reachable (ansible -m ping), then run"
                      " nodeops.numa_drift.%s again with --limit %s.")
# The probe's report: a probe changes nothing, so a node lost during it was left as it was.
PROBE_LOST = "unreachable: the connection to %s was lost during the probe; a probe changes nothing on a node."


# --------------------------------------------------------------------------- numbers as text


def signed_size(value: Optional[int]) -> str:
    """``+44.2 MiB``, ``-1.0 GiB``, ``+12 KiB``, ``0``; ``?`` when unknown (the sign always shown)."""
    if value is None:
        return "?"
    if value == 0:
        return "0"
    return ("+" if value > 0 else "-") + size(abs(value))


def size(value: Optional[int]) -> str:
    """``96.0 MiB``; KiB below 1 MiB, GiB from 1 GiB; ``unknown`` when None."""
    if value is None:
        return "unknown"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20)):
        if abs(value) >= scale:
            return "%.1f %s" % (value / scale, unit)
    if abs(value) >= 1024:
        return "%d KiB" % (value // 1024 if value > 0 else -(-value // 1024))
    return "%d B" % value


# --------------------------------------------------------------------------- drift bars


def _shown_resources(numa: Mapping[str, Any]) -> List[str]:
    """Memory always; a hugepage size when the node has or had any, or it moved."""
    shown = [MEMORY]
    for resource, numbers in sorted((numa.get("hugepages") or {}).items()):
        if any(numbers.get(key) for key in ("recorded_total", "current_total", "delta_total", "delta_allocatable")):
            shown.append(resource)
    return shown


def drift_bars(numa_nodes: Sequence[Mapping[str, Any]], bound: Optional[int]) -> List[Dict[str, Any]]:
    """Per NUMA node and resource: current minus recorded total, as a bar left (-) or right (+) of a zero axis.

    Percentages are of the whole track (the zero axis at 50 %), on one scale per Kubernetes node so that
    bars and the bound line compare. The bound applies to regular memory only (KEP-6232: total and
    allocatable per NUMA node); kubelet compares hugepages exactly, so any hugepage move is beyond it.
    """
    bars = []
    for numa in numa_nodes:
        for resource in _shown_resources(numa):
            numbers = numa.get(MEMORY) if resource == MEMORY else numa["hugepages"][resource]
            numbers = numbers or {}
            delta, delta_allocatable = numbers.get("delta_total"), numbers.get("delta_allocatable")
            moves = [abs(d) for d in (delta, delta_allocatable) if d is not None]
            if resource == MEMORY:
                over = None if bound is None or not moves else max(moves) > bound
            else:
                over = bool(moves) and max(moves) > 0
            bars.append({
                "numa_node": numa.get("node"), "resource": resource, "holds_kernel_image": bool(numa.get("holds_kernel_image")),
                "recorded": numbers.get("recorded_total"), "current": numbers.get("current_total"),
                "delta": delta, "delta_allocatable": delta_allocatable, "over": over,
                "bound": bound if resource == MEMORY else 0,
                "side": "unknown" if delta is None else "left" if delta < 0 else "right" if delta > 0 else "zero",
                "text": signed_size(delta) + ("" if delta_allocatable in (None, delta) else " (allocatable %s)" % signed_size(delta_allocatable)),
                "text_allocatable": signed_size(delta_allocatable),
            })
    scale = max([abs(b["delta"] or 0) for b in bars] + [abs(b["delta_allocatable"] or 0) for b in bars]
                + [int((bound or 0) * BOUND_HEADROOM), 1])
    for line in bars:
        magnitude = abs(line["delta"] or 0)
        line["width_pct"] = round(max(magnitude * 50.0 / scale, MIN_BAR_PERCENT if magnitude else 0.0), 2)
        line["bound_pct"] = round(bound * 50.0 / scale, 2) if line["resource"] == MEMORY and bound is not None else None
    return bars


def largest_move(bars: Sequence[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    moved = [line for line in bars if line["delta"]]
    return max(moved, key=lambda line: (bool(line["over"]), abs(line["delta"]))) if moved else None


# --------------------------------------------------------------------------- the rows


def what_happened(action: str, before: Optional[str], after: Optional[str], bars: Sequence[Mapping[str, Any]],
                  bound: Optional[int], message: str) -> str:
    """A few words: what the run did and why (the verdict), and the largest move against the bound."""
    move = largest_move(bars)
    moved = ""
    if move is not None:
        against = (" > bound " if move["over"] else " within bound ") + size(bound) if move["resource"] == MEMORY and bound is not None else (
            " (must match exactly)" if move["resource"] != MEMORY else "")
        moved = "; node%s %s %s%s" % (move["numa_node"], move["resource"], move["text"], against)
    if action == "probed":
        if before in NOTHING_TO_DO:
            return "nothing to do (%s)" % before
        if before in REPAIRABLE_VERDICTS:
            return "repairable (%s)%s" % (before, moved)
        return "needs a human (%s)%s" % (before or "unknown", moved)
    words = {
        "repaired": "repaired: %s -> %s%s" % (before, after, moved),
        "dry_run": "dry run, would repair (%s)%s; nothing changed" % (before, moved),
        "refused": "left as it is: %s%s" % (before, moved),
        "none": "nothing to do (%s)" % before,
        "loop_guard": "not repaired: repair loop guard tripped (%s)" % before,
        "not_processed": "not processed (the rollout did not reach it)",
        "unreachable": "unreachable: %s" % message.split(" What to do:", 1)[0].split(": ", 1)[-1].split(". ", 1)[0].rstrip(".")[:90],
    }
    if action in words:
        return words[action]
    # failed / rolled_back: the message's first clause says where.
    head = message.split(": ", 1)[0] if action == "failed" else "kubelet did not come back, original checkpoint restored"
    return "%s: %s" % (action.replace("_", " "), head[:90])


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")) if text else ""


def what_to_do(action: str, after: Optional[str], advice: str, host: str = "NODE", inventory: str = "-i INVENTORY") -> str:
    """The advice, once: the engine's advice for the verdict, else the report's next step; none when all is well.

    A repairable node's advice names the remediate playbook limited to it (``host``: its inventory name).
    """
    if action in ("repaired", "none", "not_processed") or after in NOTHING_TO_DO or not after:
        return ""
    if action == "dry_run":
        return "Run again without remediate_dry_run (and without --check) to repair."
    if action in ATTENTION_ACTIONS:
        return ""  # the message says what to do, with the node's own paths
    if after in REPAIRABLE_VERDICTS:
        return _sentence(remediate_advice(host, inventory))
    return advice or NEXT_STEPS.get(after, "")


CPU_MANAGER_ROW = ("class", "verdict", "online", "recorded", "reserved", "layout", "rederived_default", "pods")


def cpu_manager_row(cpu: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    """The CPU manager's part of a row (the probe's ``numa_drift.cpu``), None without one."""
    return {key: cpu.get(key) for key in CPU_MANAGER_ROW} if cpu else None


def human_need(entry: Mapping[str, Any]) -> Optional[Dict[str, Any]]:
    """Why a person must look at this node and what they do next; None when the playbooks handle it."""
    action, after = entry["action"], entry["verdict_after"]
    if action in ATTENTION_ACTIONS:
        reason, step = entry["what_happened"], entry["message"]
    elif action in ("probed", "refused") and after and after not in NOTHING_TO_DO and after not in REPAIRABLE_VERDICTS:
        causes = [str(cause.get("message", "")) for cause in entry["causes"] if cause.get("verdict") == after]
        reason, step = (causes[0] if causes else after), entry["what_to_do"] or NEXT_STEPS.get(after, "")
    else:
        return None
    return {"node": entry["node"], "host": entry["host"], "action": action, "verdict": after, "reason": reason,
            "next_step": step}


def action_note(action: str, cordoned_by_us: bool, cordoned_before: bool) -> str:
    """The cordon under the action: ours (undone after a repair), or someone else's (left as it was)."""
    if cordoned_before and not cordoned_by_us:
        return "stays cordoned (cordoned before by someone else)"
    if cordoned_by_us:
        return "cordoned, then uncordoned" if action == "repaired" else "cordoned by us"
    return ""


def node_state_text(state: Optional[Mapping[str, Any]]) -> str:
    """The Node as the API shows it when the report is written: Ready or not, cordoned and by whom ("" not looked up)."""
    if not state:
        return ""
    if not state.get("found"):
        return "no such Node in the API"
    ready = {"True": "Ready", "False": "NotReady"}.get(str(state.get("ready")), "Ready unknown")
    if not state.get("cordoned"):
        return ready + ", schedulable"
    if state.get("cordoned_by") == "us":
        return ready + ", cordoned by nodeops.numa_drift"
    return ready + ", cordoned by someone else (the remediate playbook leaves it cordoned)"


def details_text(action: str, message: str, summary: str, cordoned_by_us: bool) -> str:
    """The run's own message for the details, without what the row shows already (the causes, the advice)."""
    if action == "refused":
        return "The checkpoint was not touched%s." % (" and the Node was cordoned" if cordoned_by_us else "")
    if action == "probed" or message == summary:
        return ""
    return message


def guard_view(guard: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """The boot guard: installed, and its last boot decision (its message without the advice the row shows once)."""
    guard = dict(guard or {})
    message = str(guard.get("message") or "")
    for marker in (". What to do: ", ". Advice: ", " What to do: "):
        message = message.split(marker, 1)[0]
    stamp = guard.get("time")
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(stamp))) if isinstance(stamp, (int, float)) else (stamp or None)
    return {
        "installed": guard.get("installed"),
        "boot_id": guard.get("boot_id"),
        "verdict": guard.get("verdict"),
        "action": guard.get("action"),
        "message": message or None,
        "time": when,
        "decided": bool(guard.get("verdict") or guard.get("action")),
    }


def pinned_pods(facts: Mapping[str, Any], names: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The checkpoint's pinned pods, each with its name and namespace when the API knew the UID."""
    pods = []
    for pod in (facts.get("checkpoint") or {}).get("pinned_pods") or []:
        known = names.get(pod.get("uid"))
        pods.append({
            "uid": pod.get("uid"),
            "name": known.get("name") if known else None,
            "namespace": known.get("namespace") if known else None,
            "qos": known.get("qos") if known else None,
            "in_api": None if pod.get("uid") not in names else bool(known),
            "containers": [c.get("name") for c in pod.get("containers") or []],
            "numa_nodes": list(pod.get("numa_nodes") or []),
            "sizes": dict(pod.get("sizes") or {}),
            "sizes_text": ", ".join("%s %s" % (res, size(val)) for res, val in sorted((pod.get("sizes") or {}).items())),
        })
    return pods


def lost_outcome(host: str, outcome: Mapping[str, Any], message: str = LOST) -> Dict[str, Any]:
    """A node that left the play before the report (its connection lost mid-run): unreachable, with what it had."""
    if outcome.get("action") in FAILED_ACTIONS:
        return dict(outcome)
    return dict(outcome, action=UNREACHABLE, message=message % host)


def outcome_of(kind: str, host: str, outcome: Mapping[str, Any], lost: Sequence[str], in_progress: Sequence[str]) -> Dict[str, Any]:
    if host in lost:
        return lost_outcome(host, outcome, LOST if kind == "remediate" else PROBE_LOST)
    if host in in_progress:
        return lost_outcome(host, outcome, IN_PROGRESS)
    return dict(outcome)


def with_advice(host: str, outcome: Mapping[str, Any], kind: str = "remediate") -> Dict[str, Any]:
    """An unreachable node's message ends with what to do."""
    message = str(outcome.get("message") or "")
    if outcome.get("action") != UNREACHABLE or "What to do:" in message:
        return dict(outcome)
    return dict(outcome, message=message + UNREACHABLE_ADVICE % (kind, host))


def row(host: str, node_name: str, outcome: Mapping[str, Any], names: Mapping[str, Any], inventory: str = "-i INVENTORY",
        state: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """One node's row. ``state``: its Node now (``_cordon.node_state``), None when not looked up."""
    facts = outcome.get("numa_drift") or {}
    action = str(outcome.get("action") or "not_processed")
    before, after = outcome.get("verdict_before"), outcome.get("verdict_after")
    bound = facts.get("bound_bytes")
    message = str(outcome.get("message") or NOT_PROCESSED)
    summary = str(outcome.get("summary") or "")
    bars = drift_bars(facts.get("nodes") or [], bound)
    kubelet = facts.get("kubelet") or {}
    return {
        "host": host,
        "node": outcome.get("node") or node_name or host,
        "action": action,
        "failed": action in FAILED_ACTIONS,
        "verdict_before": before,
        "verdict_after": after,
        "repairable": facts.get("repairable"),
        "summary": summary,
        "message": message,
        "what_happened": what_happened(action, before, after, bars, bound, message),
        "details": details_text(action, message, summary, bool(outcome.get("cordoned_by_us"))),
        "what_to_do": what_to_do(action, after, str(facts.get("advice") or ""), host, inventory),
        "causes": list(facts.get("causes") or []),
        "advice": facts.get("advice") or "",
        "next_step": NEXT_STEPS.get(after, "") if after else "",
        "cordoned_by_us": bool(outcome.get("cordoned_by_us")),
        "cordoned_before": bool(outcome.get("cordoned_before")),
        "action_note": action_note(action, bool(outcome.get("cordoned_by_us")), bool(outcome.get("cordoned_before"))),
        "node_state": dict(state) if state else None,
        "node_state_text": node_state_text(state),
        "api_managed": outcome.get("api_managed"),
        "backup_file": outcome.get("backup_file"),
        "cpu_backup_file": outcome.get("cpu_backup_file"),
        # Kubelet's CPU manager, which it starts first (numa_drift.cpu): its class and the CPUs, for the details line.
        "cpu_manager": cpu_manager_row(facts.get("cpu")),
        "bound_bytes": bound,
        "bound_text": size(bound) if bound is not None else None,
        "bound_source": facts.get("bound_source"),
        "kernel_image": facts.get("kernel_image") or {},
        "checkpoint": {k: v for k, v in (facts.get("checkpoint") or {}).items() if k != "pinned_pods"},
        "numa_nodes": list(facts.get("nodes") or []),
        "drift": bars,
        "pinned_pods": pinned_pods(facts, names),
        "kubelet": {key: kubelet.get(key) for key in ("distribution", "service", "policy", "config_path", "root_dir", "release", "version",
                                                      "release_source", "rules_release")},
        "service": outcome.get("service") or kubelet.get("service"),
        "guard": guard_view(facts.get("guard")) if facts else guard_view(None),
    }


# --------------------------------------------------------------------------- pod names from the API


def uids_to_look_up(outcomes: Mapping[str, Mapping[str, Any]], known: Mapping[str, Any]) -> Dict[str, List[str]]:
    """Node name -> pinned pod UIDs not looked up yet (a UID names one pod forever, so earlier answers stand)."""
    wanted: Dict[str, List[str]] = {}
    for node, outcome in outcomes.items():
        pods = ((outcome.get("numa_drift") or {}).get("checkpoint") or {}).get("pinned_pods") or []
        missing = [pod["uid"] for pod in pods if pod.get("uid") and pod["uid"] not in known]
        if missing:
            wanted[node] = missing
    return wanted


# kubelet's annotation on the mirror Pod of a static pod: the static pod's own UID (the one kubelet's
# checkpoint records), which differs from the mirror Pod's metadata.uid (pkg/kubelet/pod/mirror_client.go).
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def names_from_listing(uids: Sequence[str], items: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """UID -> {name, namespace, qos} from a pod listing of the node; None for a UID the API does not have.

    A static pod is known to kubelet (and its checkpoint) by its own UID, to the API by its mirror Pod:
    the mirror Pod is found by the UID in its mirror annotation."""
    found = {}
    for item in items:
        meta = item.get("metadata") or {}
        named = {"name": meta.get("name"), "namespace": meta.get("namespace"), "qos": (item.get("status") or {}).get("qosClass")}
        found[meta.get("uid")] = named
        mirror_of = (meta.get("annotations") or {}).get(MIRROR_POD_ANNOTATION)
        if mirror_of:
            found[mirror_of] = named
    return {uid: found.get(uid) for uid in uids}


# --------------------------------------------------------------------------- the report


def _counted(counts: Mapping[str, int]) -> str:
    return ", ".join("%s: %d" % item for item in sorted(counts.items()))


def _counts(rows: Sequence[Mapping[str, Any]]) -> Tuple[Dict[str, int], Dict[str, int], Dict[str, int]]:
    """Nodes per verdict before, per verdict after and per action."""
    before: Dict[str, int] = {}
    after: Dict[str, int] = {}
    actions: Dict[str, int] = {}
    for entry in rows:
        for counts, key in ((before, entry["verdict_before"] or "unknown"), (after, entry["verdict_after"] or "unknown"),
                            (actions, entry["action"])):
            counts[key] = counts.get(key, 0) + 1
    return before, after, actions


def _headline(kind: str, rows: Sequence[Mapping[str, Any]], stopped: Optional[Mapping[str, Any]]) -> str:
    before, after, actions = _counts(rows)
    if kind == "remediate":
        headline = "%d nodes; actions %s; verdicts before %s; after %s" % (len(rows), _counted(actions), _counted(before), _counted(after))
    else:
        headline = "%d nodes; verdicts %s" % (len(rows), _counted(before))
    if stopped:
        headline += "; stopped: %s" % stopped.get("message", "")
    return headline


def progress_headline(report: Mapping[str, Any]) -> str:
    """The headline of ``report`` with the nodes whose procedure starts after it as they are now (not processed yet),
    rather than as the report on disk must show them: what the run prints before their procedures start."""
    return _headline(report["kind"], not_started_rows(report), report["stopped"])


def not_started_rows(report: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """``report``'s rows with the nodes it has in progress as they were before their procedure (``if_not_started``)."""
    again = report.get("if_not_started") or {}
    return [dict(again.get(entry["host"]) or entry) for entry in report["nodes"]]


def build(kind: str, hosts: Sequence[str], outcomes: Sequence[Mapping[str, Any]], node_names: Sequence[Optional[str]],
          stopped: Optional[Mapping[str, Any]], pod_names: Mapping[str, Any], pods_source: str, generated_at: str,
          lost: Sequence[str] = (), in_progress: Sequence[str] = (), inventory: str = "-i INVENTORY",
          states: Optional[Mapping[str, Mapping[str, Any]]] = None, states_source: str = "",
          rollout_ended: Optional[bool] = None, in_progress_batch: Optional[int] = None) -> Dict[str, Any]:
    """``lost``: hosts the run reached that left the play before the report (reported as unreachable).

    ``in_progress``: hosts whose procedure starts after this report is written (batch ``in_progress_batch``, once the
    rollout controls before it pass). This report stays on disk when the run ends before the next one (every node of
    the batch lost, or the run interrupted): they are unreachable in it; their rows as they were before the procedure
    are kept too (``if_not_started``), for a run that ended before the controls let that batch start (:func:`not_started`).
    ``inventory``: the run's ``-i`` options (``verdicts.inventory_option``), for the commands the report suggests.
    ``states``: Node name -> ``_cordon.node_state`` (None: not looked up, ``states_source`` says why).
    ``rollout_ended`` (remediate): false in a report written in the middle of the rollout (default: nothing in progress).
    """
    rows, if_not_started = [], {}
    for host, outcome, name in zip(hosts, outcomes, node_names):
        state = (states or {}).get(str((outcome or {}).get("node") or name or host))
        rows.append(row(host, name or host, with_advice(host, outcome_of(kind, host, outcome or {}, lost, in_progress), kind), pod_names,
                        inventory, state))
        if host in in_progress:
            if_not_started[host] = row(host, name or host, with_advice(host, outcome_of(kind, host, outcome or {}, lost, ()), kind),
                                       pod_names, inventory, state)
    return assemble(kind, rows, stopped, generated_at, inventory, pods_source, states_source or ("api" if states is not None else "not looked up"),
                    in_progress, rollout_ended, in_progress_batch, if_not_started)


def assemble(kind: str, rows: Sequence[Dict[str, Any]], stopped: Optional[Mapping[str, Any]], generated_at: str, inventory: str,
             pods_source: str, states_source: str, in_progress: Sequence[str] = (), rollout_ended: Optional[bool] = None,
             in_progress_batch: Optional[int] = None, if_not_started: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """The report from its rows (every other field is derived from them)."""
    before, after, actions = _counts(rows)
    needs_human = [need for need in (human_need(entry) for entry in rows) if need]
    for entry in rows:  # the row points to the box, which says the next step (said once per page)
        entry["needs_human"] = any(need["host"] == entry["host"] for need in needs_human)
    repairable = [entry["host"] for entry in rows if entry["verdict_after"] in REPAIRABLE_VERDICTS and entry["action"] in ("probed", "dry_run")]
    next_steps = dict(NEXT_STEPS)
    for verdict in REPAIRABLE_VERDICTS:
        still = [entry["host"] for entry in rows if entry["verdict_after"] == verdict]  # the per-verdict table's nodes
        if still:
            next_steps[verdict] = _sentence(remediate_advice(",".join(still), inventory))
    stopped = stopped if kind == "remediate" and stopped else None
    return {
        "kind": kind,
        "generated_at": generated_at,
        "collection": "nodeops.numa_drift",
        "inventory": inventory,
        "headline": _headline(kind, rows, stopped),
        "stopped": dict(stopped) if stopped else None,
        "counts": {"verdict_before": before, "verdict_after": after, "action": actions},
        "next_steps": next_steps,
        # What now, first: the nodes a person must look at, then the ones the remediate playbook repairs.
        "needs_human": needs_human,
        "repairable": repairable,
        # Of those, the ones someone else cordoned: the playbook repairs them and leaves them cordoned.
        "repairable_cordoned": [entry["host"] for entry in rows if entry["host"] in repairable
                                and (entry["node_state"] or {}).get("cordoned_by") == "someone else"],
        "remediate_command": "ansible-playbook %s nodeops.numa_drift.remediate --limit %s" % (inventory, ",".join(repairable))
        if repairable else None,
        "not_processed": [entry["host"] for entry in rows if entry["action"] == "not_processed"],
        # Left as they were and not Ready when the report was written (Ready unknown without the API counts): a rollout
        # names them in its last lines.
        "stay_down": [{"node": entry["node"], "action": entry["action"], "verdict": entry["verdict_after"]} for entry in rows
                      if entry["action"] in ("refused", "loop_guard") and (entry["node_state"] or {}).get("ready") != "True"],
        # Written before these hosts' procedures (empty in the report a rollout ends with), the batch they are, and
        # their rows as they were before it.
        "in_progress": list(in_progress),
        "in_progress_batch": in_progress_batch if in_progress else None,
        "if_not_started": dict(if_not_started or {}),
        # The report the rollout ends with (a report written in the middle of it says false; a probe report has none).
        **({"rollout_ended": (not in_progress) if rollout_ended is None else bool(rollout_ended)} if kind == "remediate" else {}),
        "pods_source": pods_source,
        "node_states_source": states_source,
        "nodes": list(rows),
    }


def not_started(report: Mapping[str, Any]) -> Dict[str, Any]:
    """``report`` (written before a batch) for a run that ended before the rollout controls let that batch start: its
    nodes as they were before (not processed), nothing in progress, the rollout not ended."""
    return assemble(report["kind"], not_started_rows(report), report.get("stopped"), str(report.get("generated_at") or ""),
                    str(report.get("inventory") or "-i INVENTORY"), str(report.get("pods_source") or ""),
                    str(report.get("node_states_source") or ""), (), False if report["kind"] == "remediate" else None)


# --------------------------------------------------------------------------- the page


def render_html(report: Mapping[str, Any], template: Optional[str] = None) -> str:
    """report.html from the report: Jinja2 with HTML autoescaping on, so every value the template prints is escaped.

    A node's files feed the report (the boot guard's state, pod and container names, messages): nothing a node
    wrote may become markup in the operator's browser, whatever the template forgets (ansible.builtin.template
    does not autoescape). ``template`` is the template's text (default: :data:`TEMPLATE`).
    """
    if template is None:
        with open(TEMPLATE, encoding="utf-8") as handle:
            template = handle.read()
    environment = jinja2.Environment(autoescape=True, trim_blocks=True, keep_trailing_newline=True,
                                     undefined=jinja2.ChainableUndefined)
    return environment.from_string(template).render(numa_drift_report=report)


def _replace(path: str, text: str) -> None:
    """``text`` at ``path`` atomically (a reader sees the old file or the new one), mode 0644."""
    directory = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as output:
            output.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def write(directory: str, report: Mapping[str, Any]) -> None:
    """report.json (for machines) and report.html (for people) in ``directory``, created 0755 when missing."""
    os.makedirs(directory, mode=0o755, exist_ok=True)
    _replace(os.path.join(directory, "report.json"), json.dumps(report, indent=4, sort_keys=True) + "\n")
    _replace(os.path.join(directory, "report.html"), render_html(report))
