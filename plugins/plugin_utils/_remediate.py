# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The remediate role's per-node decisions, as pure functions (controller side).

The role's tasks do things (probe, cordon, stop kubelet, repair, ...); what to do next and what
to say about it is decided here, from the probe's ``numa_drift`` facts and the results of those
tasks. The action plugins ``remediate_plan`` and ``remediate_outcome`` are thin wrappers.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Dict, List, Mapping, Optional

from ansible_collections.nodeops.numa_drift.plugins.module_utils._write import history as _history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import NOTHING_TO_DO

MARKER = "nodeops.numa_drift"
SYSTEMD_STATUS_PROPERTIES = ("ActiveState", "SubState", "NRestarts", "MainPID", "ActiveEnterTimestampMonotonic")

# The role's task names, mapped to the phase a failure there is reported in (tasks/repair.yml).
PHASES = {
    "Cordon the Node": "cordon",
    "Drain the Node": "drain",
    "Stop kubelet": "stop_kubelet",
    "Repair the checkpoint": "repair",
    "Start kubelet": "start_kubelet",
    "Wait for kubelet to become active": "wait_kubelet",
    "Watch kubelet for the settle period": "wait_kubelet",
    "Wait for the Node to report Ready": "wait_node",
    "Wait for the evicted pods to end": "drain_wait",
    "Uncordon the Node": "uncordon",
    "Finish what an earlier run left": "uncordon",
    "Decide what to do on this node": "plan",
}
# Phases after which the repaired checkpoint is in place and kubelet did not come back: restore it.
RESTORE_PHASES = ("start_kubelet", "wait_kubelet", "wait_node")
# drain_wait (the evicted pods did not end after the repair) is in neither: the repair worked, the Node is Ready.
# Phases after kubelet was stopped but before anything was written: start it again.
RESTART_PHASES = ("stop_kubelet", "repair")


# --------------------------------------------------------------------------- the plan


def service_name(explicit: Optional[str], facts: Mapping[str, Any]) -> str:
    """An explicit remediate_service_name wins, then the unit the probe discovered, then ``kubelet``."""
    if explicit:
        return explicit
    discovered = (facts.get("kubelet") or {}).get("service")
    return str(discovered) if discovered else "kubelet"


def service_commands(mode: str, name: str, commands: Optional[Mapping[str, str]]) -> Dict[str, str]:
    """stop/start/status shell commands; systemd's clear the start limit before a start."""
    if mode == "command":
        return {key: str((commands or {}).get(key) or "") for key in ("stop", "start", "status")}
    unit = shlex.quote(name)
    return {
        "stop": "systemctl stop %s" % unit,
        # A crash-looping kubelet may have hit systemd's start limit: clear it (fails harmlessly when not failed).
        "start": "systemctl reset-failed %s >/dev/null 2>&1; systemctl start %s" % (unit, unit),
        "status": "systemctl show %s %s" % (unit, " ".join("--property=" + p for p in SYSTEMD_STATUS_PROPERTIES)),
    }


def validation_errors(options: Mapping[str, Any]) -> List[str]:
    errors = []
    mode = options.get("service_mode")
    if mode not in ("systemd", "command"):
        errors.append("remediate_service_mode must be systemd or command")
    if mode == "command":
        commands = options.get("service_commands") or {}
        if not isinstance(commands, Mapping) or not all(str(commands.get(k) or "") for k in ("stop", "start", "status")):
            errors.append("remediate_service_mode=command needs remediate_service_commands with stop, start and status")
    if int(options.get("settle_seconds", 0)) < 0:
        errors.append("remediate_settle_seconds must be >= 0")
    if int(options.get("ready_poll", 1)) < 1:
        errors.append("remediate_ready_poll must be >= 1")
    if int(options.get("ready_timeout", 1)) < int(options.get("ready_poll", 1)):
        errors.append("remediate_ready_timeout must be >= remediate_ready_poll")
    if int(options.get("loop_max_repairs", 1)) < 1:
        errors.append("remediate_loop_max_repairs must be >= 1")
    if not str(options.get("node_name") or ""):
        errors.append("remediate_node_name must not be empty")
    return errors


def loop_guard_message(history: List[Dict[str, Any]], options: Mapping[str, Any], now: float) -> Optional[str]:
    """The engine's loop guard (the module applies the same rule again under the node lock), with the role's hints."""
    message = _history.loop_guard_message(history, int(options["loop_max_repairs"]), float(options["loop_window_hours"]), now,
                                          options["history_file"])
    if message is None:
        return None
    return "%s (remediate_loop_max_repairs; or: ansible %s -b -m ansible.builtin.file -a \"path=%s state=absent\")" % (
        message, options.get("host", "NODE"), options["history_file"])


def refused_message(facts: Mapping[str, Any], cordon: bool) -> str:
    causes = "; ".join(str(cause.get("message", "")) for cause in facts.get("causes") or [])
    return "not repairable (%s): %s. What to do: %s. The node was left as it is%s" % (
        facts.get("verdict"), causes, facts.get("advice", ""), ", and cordoned" if cordon else "")


def outcome_record(facts: Mapping[str, Any], node_name: str, api: bool, service: str) -> Dict[str, Any]:
    """The outcome record of one node as its probe leaves it: nothing done yet."""
    verdict = facts.get("verdict")
    return {
        "node": node_name, "verdict_before": verdict, "verdict_after": verdict, "action": "none",
        "summary": facts.get("summary", ""), "cordoned_by_us": False, "api_managed": api, "backup_file": None, "cpu_backup_file": None,
        "message": "", "numa_drift": dict(facts), "service": service, "event": None,
    }


def probe_outcome(host: str, probe: Mapping[str, Any]) -> Dict[str, Any]:
    """The probe playbook's record of one host from ``probe``: its registered numa_drift_facts ``result``, its Node's
    ``node`` name, whether the ``api`` manages it and its ``service`` (remediate_node_name, remediate_require_api,
    remediate_service_name)."""
    result = probe.get("result") if isinstance(probe.get("result"), Mapping) else {}
    node = str(probe.get("node") or host)
    facts = result.get("numa_drift")
    if result.get("unreachable"):
        return {"node": node, "action": "unreachable", "message": "unreachable: %s. The node was not probed." % (result.get("msg") or "?")}
    if not isinstance(facts, Mapping):
        return {"node": node, "action": "failed", "message": "probe failed: %s" % (result.get("msg") or "?")}
    outcome = outcome_record(facts, node, bool(probe.get("api", True)), service_name(probe.get("service"), facts))
    outcome.update(action="probed", message=outcome["summary"])
    return outcome


def plan(facts: Mapping[str, Any], options: Mapping[str, Any], history: List[Dict[str, Any]], now: float) -> Dict[str, Any]:
    """What the role does on this node (``branch``) and the outcome record it starts from."""
    verdict = facts.get("verdict")
    api = bool(options["api"])
    dry = bool(options["dry"])
    name = service_name(options.get("service_name"), facts)
    outcome = outcome_record(facts, options["node_name"], api, name)
    tripped = loop_guard_message(history, options, now) if facts.get("repairable") else None
    if verdict in NOTHING_TO_DO:
        branch = "nothing"
        outcome["message"] = "nothing to do (%s): %s" % (verdict, facts.get("summary", ""))
    elif not facts.get("repairable"):
        branch = "refused"
        cordon = bool(options.get("cordon_unrepairable")) and api and not dry
        outcome.update(action="refused", message=refused_message(facts, cordon))
        with_event(outcome, "NumaDriftRefused")
    elif tripped:
        branch = "loop_guard"
        outcome.update(action="loop_guard", message=tripped)
    elif dry:
        # What a repair would do, from the probe's facts (the repair writes what the probe assessed): nothing runs.
        branch = "dry_run"
        outcome.update(action="dry_run", message=dry_run_message(outcome, facts.get("checkpoint") or {}, options))
    else:
        branch = "repair"
    return {
        "branch": branch,
        "finish_earlier_run": branch == "nothing" and api and not dry,
        "cordon_refused": branch == "refused" and bool(options.get("cordon_unrepairable")) and api and not dry,
        "service_name": name,
        "service_commands": service_commands(options["service_mode"], name, options.get("service_commands")),
        "outcome": outcome,
    }


# --------------------------------------------------------------------------- outcomes


def dry_run_message(outcome: Mapping[str, Any], checkpoint: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    """What a repair would do, from the probe's view of the checkpoint (its path, the layout a repair writes)."""
    api = bool(options["api"])
    return (
        "dry run, nothing changed: would %sstop kubelet, rewrite %s (%s layout, every assignment kept, backup in %s), start"
        " kubelet, wait %ss for it to stay up%s: %s" % (
            "cordon the Node, " if api else "", checkpoint.get("path", "?"), checkpoint.get("write_layout") or "?",
            options["backup_path"], options["settle_seconds"], ", wait for Ready and uncordon" if api else "", outcome.get("summary", ""))
    )


def repaired_message(outcome: Mapping[str, Any], cordon: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    if not options["api"]:
        note = "; cordon state was not managed (remediate_require_api=false): the Node was neither cordoned nor checked for Ready"
    elif cordon.get("cordoned_by_us"):
        note = ", the Node is Ready and was uncordoned"
    elif cordon.get("cordoned_before"):
        note = ", the Node is Ready and stays cordoned (it was cordoned before this run)"
    else:
        note = ", the Node is Ready"
    return "repaired: %s; backup %s; kubelet stayed up for %ss%s" % (
        outcome.get("summary", ""), backups_of(outcome) or "none (nothing was written)", options["settle_seconds"], note)


def failure_text(task_name: str, result: Mapping[str, Any]) -> str:
    # A task failed by its failed_when on a warning has no msg: the warnings say why (k8s_drain's wait timeout).
    reason = result.get("msg") or "; ".join(str(warning) for warning in result.get("warnings") or []) or "failed"
    text = "%s: %s" % (task_name or "a task", str(reason).strip())
    for key, left, right in (("stdout", " (", ")"), ("stderr", " [", "]")):
        value = str(result.get(key) or "").strip()
        if value:
            text += left + value + right
    return text


def kubelet_wait_failure(task_name: str, result: Mapping[str, Any], options: Mapping[str, Any], active: bool) -> str:
    status = ("%s %s" % (str(result.get("stdout") or "").strip(), str(result.get("stderr") or "").strip())).strip()
    if task_name == "Wait for kubelet to become active":
        return "kubelet did not become active within %ss (%s)" % (options["ready_timeout"], status)
    return "kubelet did not stay up for %ss after the repair: it %s (%s)" % (
        options["settle_seconds"], "restarted" if active else "stopped", status)


def node_ready_failure(result: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    node = (result.get("resources") or [{}])[0]
    ready = next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})
    return "Node %s did not report Ready within %ss (Ready=%s: %s)" % (
        options["node_name"], options["ready_timeout"], ready.get("status", "?"), ready.get("message", ""))


def backups_of(outcome: Mapping[str, Any]) -> str:
    """The repair's backups, as a message names them: the checkpoint's, and cpu_manager_state's when it was rewritten."""
    return " and ".join(str(outcome[key]) for key in ("cpu_backup_file", "backup_file") if outcome.get(key))


def recovery(task_name: str, result: Mapping[str, Any], state: Mapping[str, Any], options: Mapping[str, Any]) -> Dict[str, Any]:
    """After a failed task: the phase, why, and what to put back."""
    phase = PHASES.get(task_name, "probe")
    if phase == "wait_kubelet":
        failure = kubelet_wait_failure(task_name, result, options, bool(state.get("kubelet_active")))
    elif phase == "wait_node" and result.get("resources"):
        failure = node_ready_failure(result, options)
    else:
        failure = failure_text(task_name, result)
    # A Ready wait whose last attempt could not read the Node at all: the API went away.
    api_lost = phase == "wait_node" and "resources" not in result
    written = bool(state.get("checkpoint_written"))
    return {
        "phase": phase,
        "failure": failure,
        "api_lost": api_lost,
        "restore": written and not api_lost and phase in RESTORE_PHASES,
        "restart": phase in RESTART_PHASES,
        "annotate": bool(options["api"]) and not api_lost and phase not in ("probe", "cordon", "uncordon")
        and bool(state.get("cordoned_by_us") or state.get("cordoned_before")),
    }


def _cordon_note(options: Mapping[str, Any], cordon: Mapping[str, Any]) -> str:
    if not options["api"]:
        return "; cordon state was not managed (remediate_require_api=false)"
    if cordon.get("cordoned_by_us"):
        return "; the node stays cordoned (annotation %s/reason)" % options["annotation_prefix"]
    if cordon.get("cordoned_before"):
        return "; the node stays cordoned (it was cordoned before this run)"
    return ""


def failed_message(rec: Mapping[str, Any], cordon: Mapping[str, Any], restored: bool, notes: List[str],
                   outcome: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    phase, failure, name = rec["phase"], rec["failure"], options["node_name"]
    note = _cordon_note(options, cordon)
    cordoned_by = "%s/cordoned-by" % options["annotation_prefix"]
    if phase in RESTORE_PHASES and not rec["api_lost"]:
        if restored:
            what = "The original checkpoint was put back from %s and kubelet was started again" % backups_of(outcome)
        else:
            what = ("Putting the original checkpoint back did NOT complete: restore %s to %s by hand (or run the rollback playbook)"
                    % (backups_of(outcome), options.get("checkpoint_path") or "the checkpoint path"))
        message = "kubelet did not come back after the repair (%s). %s%s." % (failure, what, note)
    elif phase == "wait_node":
        message = (
            "the checkpoint was repaired and kubelet stayed up for %ss, but the API could not be reached to see the Node Ready"
            " (%s). The node is repaired but still cordoned: run the remediate playbook again when the API is back (it finishes"
            " the uncordon), or: kubectl uncordon %s && kubectl annotate node %s %s-" % (options["settle_seconds"], failure, name, name, cordoned_by))
    elif phase == "drain_wait":
        message = (
            "the checkpoint was repaired and the Node is Ready, but the pods the drain evicted did not end within %ss (%s),"
            " so the node stays cordoned. Check the pods still Terminating on it (kubectl get pods -A --field-selector"
            " spec.nodeName=%s), then: kubectl uncordon %s && kubectl annotate node %s %s- , or, once they are gone, run the remediate playbook"
            " again (it finishes the uncordon)"
            % (options["drain_timeout"], failure, name, name, name, cordoned_by))
    elif phase == "uncordon":
        if not cordon.get("cordoned_by_us"):
            message = ("the node is repaired and Ready, and stays cordoned as it was before this run, but recording the outcome on"
                       " the Node failed (%s)" % failure)
        else:
            message = ("the node is repaired and Ready but still cordoned: uncordoning it through the API failed (%s). Run the"
                       " remediate playbook again when the API is back, or: kubectl uncordon %s && kubectl annotate node %s %s-"
                       % (failure, name, name, cordoned_by))
    else:
        message = {
            "probe": "probe failed, nothing was changed: %s" % failure,
            "plan": "nothing was changed: %s" % failure,
            "cordon": ("could not cordon the Node through the API, so the node was not touched (kubelet and its checkpoint are as"
                       " they were): %s" % failure),
            "drain": "drain failed; kubelet and its checkpoint were not touched%s: %s" % (note, failure),
            "stop_kubelet": "stopping kubelet failed; the checkpoint was not touched and kubelet was started again%s: %s" % (note, failure),
            "repair": "the repair failed and the checkpoint is as it was; kubelet was started again%s: %s" % (note, failure),
        }.get(phase, "failed: %s" % failure)
    message += drain_permission_hint(phase, failure)
    if notes:
        message += " Recovery problems: " + "; ".join(notes)
    return message


# k8s_drain reports a refused pod read or eviction with no more than the answer's reason.
DRAIN_RBAC_HINT = (" The API server refused the drain's request: remediate_drain=true needs the extra rules of"
                   " extensions/rbac/nodeops-numa-drift-drain.yml (create on pods/eviction, get on pods) bound to the same identity.")


def drain_permission_hint(phase: str, failure: str) -> str:
    """Where a drain step failed as Forbidden, say which shipped ClusterRole grants what it needs."""
    return DRAIN_RBAC_HINT if phase in ("drain", "drain_wait") and "Forbidden" in failure else ""


def with_event(outcome: Dict[str, Any], reason: str) -> Dict[str, Any]:
    """The outcome with the Node Event to post: the per-node drift and bound (the probe's summary), then what happened."""
    text = "%s. %s" % (outcome.get("summary", ""), outcome.get("message", ""))
    outcome.update(event=reason, event_message=text if len(text) <= 1000 else text[:997] + "...")
    return outcome


# --------------------------------------------------------------------------- waiting for kubelet and the Node


def kubelet_active(stdout: str, rc: int, service_mode: str) -> bool:
    """systemd's ActiveState=active (``systemctl show``), or the operator's status command's exit code 0."""
    if service_mode == "systemd":
        return re.search(r"(?m)^ActiveState=active$", stdout or "") is not None
    return rc == 0


def kubelet_identity(stdout: str, regexp: str) -> str:
    """Which run of kubelet this is (a restart changes it): the status fields ``regexp`` finds, in order."""
    return " ".join(re.findall(regexp, stdout or ""))


def node_ready(resources: Any) -> bool:
    """The Node of a k8s_info result has the condition Ready=True."""
    node = (resources or [{}])[0] if isinstance(resources, list) else {}
    conditions = ((node or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def wait_step(wait_for: str, result: Mapping[str, Any], attempt: int, options: Mapping[str, Any]) -> Optional[bool]:
    """After poll number ``attempt`` (from 1): True done, False failed for good, None poll again.

    ``kubelet_active``: until kubelet is active. ``kubelet_settled``: kubelet stays active as the same run
    (``options['identity']``, its first identity) until poll ``options['polls'] + 1`` (``polls`` * delay seconds
    after the first), failing at the first poll that sees it stopped or restarted. ``node_ready``: until Ready.
    """
    if wait_for == "node_ready":
        return True if not result.get("failed") and node_ready(result.get("resources")) else None
    # As the shell task's failed_when did: the status command's output and exit code only.
    active = kubelet_active(str(result.get("stdout") or ""), int(result.get("rc", 1)), options["service_mode"])
    if wait_for == "kubelet_active":
        return True if active else None
    if not active or kubelet_identity(str(result.get("stdout") or ""), options["identity_regexp"]) != options["identity"]:
        return False
    return True if attempt > int(options["polls"]) else None
