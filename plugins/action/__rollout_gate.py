# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__rollout_gate: may the rollout go on with the next batch?"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from typing import Any, Dict, Optional

from ansible.module_utils.urls import open_url
from ansible.plugins.action import ActionBase
from ansible.utils.collection_loader import AnsibleCollectionConfig

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import inventory_option
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _lease_watch, _rollout
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import CONFLICT_RETRIES, Api, ApiFailure

ARGUMENT_SPEC = {
    "state": {"type": "str", "default": "checked", "choices": ["checked", "released", "watched"]},
    "lock": {"type": "dict", "default": {}, "options": {
        "enabled": {"type": "bool", "default": True},
        "name": {"type": "str", "default": "nodeops-numa-drift"},
        "namespace": {"type": "str", "default": "kube-system"},
        "holder": {"type": "str"},
        "duration": {"type": "int", "default": 1800},
        "wait_timeout": {"type": "int", "default": 0},
        "poll": {"type": "int", "default": 10},
    }},
    "pause": {"type": "dict", "default": {}, "options": {
        "configmap": {"type": "str"},
        "namespace": {"type": "str", "default": "kube-system"},
        "key": {"type": "str", "default": "paused"},
    }},
    "health": {"type": "dict", "default": {}, "options": {
        "max_unhealthy": {"type": "raw"},
        "targets": {"type": "list", "elements": "str", "default": []},
        "annotation_prefix": {"type": "str", "default": "numa-drift.nodeops.io"},
        "prometheus_url": {"type": "str"},
        "alert_filter_regexp": {"type": "str", "default": ".*"},
    }},
    "window": {"type": "dict", "default": {}, "options": {
        "days": {"type": "list", "elements": "str", "default": []},
        "hours": {"type": "str"},
        "timezone": {"type": "str", "default": "UTC"},
    }},
    "kubeconfig": {"type": "path"},
    "context": {"type": "str"},
    # Where the run's fleet report is: a run that ends in the middle of its rollout says what it left (the watcher).
    "report_dir": {"type": "path"},
    # The batch these controls are checked before: when they pass, the run's watcher is told that its procedures start
    # (the report written before the controls has its nodes in progress; a run that ends before they pass did not start them).
    "batch": {"type": "int"},
}


def default_holder() -> str:
    """Who holds the lock: the AWX job when there is one, else this controller and process."""
    job = os.environ.get("JOB_ID") or os.environ.get("AWX_JOB_ID")
    where = "awx-job-%s" % job if job else "%s-%d" % (socket.gethostname(), os.getpid())
    return "%s_%s" % (where, uuid.uuid4().hex[:8])


class ActionModule(ActionBase):
    """Window, then the cluster lock (taken or renewed), then pause, then the health gate; stops at the first that says no."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        args["inventory"] = inventory_option((task_vars or {}).get("ansible_inventory_sources"))
        lock = dict(args["lock"])
        lock["holder"] = lock["holder"] or default_holder()
        result.update(changed=False, proceed=True, stop=None, message="", holder=lock["holder"], lock_held=False)
        try:
            if args["state"] == "released":
                return self._release(result, lock, args)
            if args["state"] == "watched":
                # At the run's start: a run that ends before the lock is taken says that it changed nothing.
                result["watcher"] = _lease_watch.spawn_first_pass(os.getppid(), AnsibleCollectionConfig.collection_paths,
                                                                  args["report_dir"] or os.path.realpath("numa-drift-report"),
                                                                  args["inventory"], (task_vars or {}).get("ansible_limit"))
                return result
            for check in (self._window, self._lock, self._pause, self._health):
                verdict = check(args, lock, result)
                if verdict:
                    result.update(proceed=False, stop=verdict[0], message=verdict[1])
                    break
            if result["proceed"] and args["batch"]:
                self._note_start(args["batch"], result)
        except (ApiFailure, ValueError) as error:
            result.update(proceed=False, stop="error", message="the rollout controls could not be checked: %s" % error)
        return result

    @staticmethod
    def _note_start(batch: int, result: Dict[str, Any]) -> None:
        """Tell the run's watcher that this batch's procedures start; the rollout stops when it cannot be told."""
        try:
            _lease_watch.gate_passed(os.getppid(), batch)
        except OSError as error:
            result.update(proceed=False, stop="error", message="could not note that batch %d starts (%s): a run interrupted in it "
                                                               "would be reported wrongly, so it does not start" % (batch, error))

    def _api(self, args: Dict[str, Any]) -> Api:
        if not hasattr(self, "_client"):
            self._client = Api(args["kubeconfig"], args["context"])  # pylint: disable=attribute-defined-outside-init
        return self._client

    # -- window

    @staticmethod
    def _window(args: Dict[str, Any], lock: Dict[str, Any], result: Dict[str, Any]) -> Optional[tuple]:
        window = args["window"]
        if not window["days"] and not window["hours"]:
            return None
        state = _rollout.window_state(time.time(), window["days"], window["hours"], window["timezone"])
        result["window"] = state
        if state["open"]:
            return None
        return "window", "outside the maintenance window (%s %s, %s): nothing was done; it opens %s" % (
            ",".join(window["days"]) or "every day", window["hours"] or "all day", window["timezone"], state["opens"] or "never")

    # -- the cluster lock

    def _lock(self, args: Dict[str, Any], lock: Dict[str, Any], result: Dict[str, Any]) -> Optional[tuple]:
        if not lock["enabled"]:
            return None
        api, started = self._api(args), time.time()
        while True:
            outcome = self._try_lock(api, lock)
            if outcome[0] != "wait":
                result.update(lock_held=True, lock_action=outcome[0], lock_message=outcome[1],
                              lock_waited_seconds=round(time.time() - started, 1))
                if outcome[0] != "renew":
                    # ansible-playbook (this worker's parent) may end with no task left to release the lock: watch it.
                    unfinished = {"report_dir": args["report_dir"], "inventory": args["inventory"],
                                  "annotation_prefix": args["health"]["annotation_prefix"]} if args["report_dir"] else None
                    result["lock_watcher"] = _lease_watch.spawn(lock, args["kubeconfig"], args["context"], os.getppid(),
                                                                AnsibleCollectionConfig.collection_paths, unfinished)
                return None
            if time.time() - started + lock["poll"] > lock["wait_timeout"]:
                return "lock", ("another rollout holds the cluster lock (Lease %s/%s %s); waited %ds (numa_drift_lock_wait_timeout), "
                                "nothing was done by this run" % (lock["namespace"], lock["name"], outcome[1], lock["wait_timeout"]))
            time.sleep(lock["poll"])

    def _try_lock(self, api: Api, lock: Dict[str, Any]) -> tuple:
        for _attempt in range(CONFLICT_RETRIES):
            lease = api.get("coordination.k8s.io/v1", "Lease", lock["name"], lock["namespace"])
            action, why = _rollout.lease_decision(lease, lock["holder"], time.time())
            if action == "wait":
                return action, why
            body = _rollout.lease_body(lease, lock["name"], lock["namespace"], lock["holder"], lock["duration"], time.time())
            try:
                if lease is None:
                    api.create("coordination.k8s.io/v1", "Lease", body, lock["namespace"])
                else:
                    api.replace("coordination.k8s.io/v1", "Lease", body, lock["namespace"])
                return action, why
            except ApiFailure as failure:
                if failure.status not in (409,):  # 409: another run wrote first (conflict, or created it): look again
                    raise
        return "wait", "the Lease kept changing (%d conflicts in a row)" % CONFLICT_RETRIES

    def _release(self, result: Dict[str, Any], lock: Dict[str, Any], args: Dict[str, Any]) -> Dict[str, Any]:
        if not lock["enabled"]:
            return result
        result["message"] = _lease_watch.release(self._api(args), lock["name"], lock["namespace"], lock["holder"])
        return result

    # -- pause

    def _pause(self, args: Dict[str, Any], lock: Dict[str, Any], result: Dict[str, Any]) -> Optional[tuple]:
        pause = args["pause"]
        if not pause["configmap"]:
            return None
        configmap = self._api(args).get("v1", "ConfigMap", pause["configmap"], pause["namespace"])
        reason = _rollout.paused(configmap, pause["key"])
        if reason:
            return "paused", "the rollout is %s (ConfigMap %s/%s key %s); it stopped before the next batch" % (
                reason, pause["namespace"], pause["configmap"], pause["key"])
        return None

    # -- health gate

    def _health(self, args: Dict[str, Any], lock: Dict[str, Any], result: Dict[str, Any]) -> Optional[tuple]:
        health = args["health"]
        if health["max_unhealthy"] not in (None, ""):
            nodes = self._api(args).list("v1", "Node").get("items") or []
            others = _rollout.unhealthy_others(nodes, health["targets"], health["annotation_prefix"])
            limit, described = _rollout.threshold(health["max_unhealthy"], len(nodes))
            result["unhealthy_nodes"] = others
            if len(others) > limit:
                return "unhealthy", ("%d Nodes are NotReady for reasons other than this rollout (%s), more than "
                                     "numa_drift_max_unhealthy=%s: stopped before the next batch" % (len(others), ", ".join(others), described))
        if health["prometheus_url"]:
            url = health["prometheus_url"].rstrip("/") + "/api/v1/alerts"
            try:
                with open_url(url, timeout=15) as response:
                    document = json.loads(response.read().decode("utf-8"))
            except (OSError, ValueError) as error:
                return "alerts", "could not ask Prometheus at %s for firing alerts (%s): stopped before the next batch" % (url, error)
            firing = _rollout.firing_alerts(document, health["alert_filter_regexp"])
            result["firing_alerts"] = firing
            if firing:
                return "alerts", "alerts matching %r are firing in Prometheus (%s): stopped before the next batch" % (
                    health["alert_filter_regexp"], ", ".join(firing))
        return None
