# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__fleet_report: the fleet report, pinned pods named from the API, written.

It renders report.html (``_report.render_html``: Jinja2 with HTML autoescaping, which ansible.builtin.template does
not do), so that nothing a node wrote reaches the page as markup, and writes report.json and report.html into
``path`` on the controller, each atomically.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import inventory_option
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon, _remediate, _report
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import call_within, set_host_facts
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import Api, ApiFailure, nodes_within

# Seconds the whole pod-name lookup may take (a black-holed API must not stall the report).
POD_LOOKUP_TIMEOUT = 10.0

ARGUMENT_SPEC = {
    "kind": {"type": "str", "required": True, "choices": ["probe", "remediate"]},
    "hosts": {"type": "list", "elements": "str", "required": True},
    # Each host's outcome; for the probe playbook, its registered numa_drift_facts result (_remediate.probe_outcome).
    "outcomes": {"type": "list", "elements": "raw", "required": True},
    "node_names": {"type": "list", "elements": "raw", "default": []},
    "probe_api": {"type": "list", "elements": "raw", "default": []},
    "probe_services": {"type": "list", "elements": "raw", "default": []},
    # host -> outcome of the nodes the remediate playbook's first pass settled (they have no outcome of their own).
    "settled": {"type": "dict", "default": {}},
    "lost": {"type": "list", "elements": "str", "default": []},
    "in_progress": {"type": "list", "elements": "str", "default": []},
    # The batch those hosts are (the remediate playbook's report written before a batch's rollout controls).
    "in_progress_batch": {"type": "int"},
    # False in the reports written in the middle of the rollout (the watcher says what such a run left).
    "rollout_ended": {"type": "bool"},
    "stopped": {"type": "raw"},
    "pod_names": {"type": "dict", "default": {}, "options": {
        "from_api": {"type": "bool", "default": True},
        "known": {"type": "dict", "default": {}},
        "kubeconfig": {"type": "path"},
        "context": {"type": "str"},
    }},
    # Each Node's Ready condition and cordon (one Node list) when the nodes are API-managed.
    "node_state": {"type": "bool", "default": True},
    "annotation_prefix": {"type": "str", "default": "numa-drift.nodeops.io"},
    "path": {"type": "path", "required": True},
}


def _padded(values: List[Any], count: int, fill: Any) -> List[Any]:
    """``values`` as one per host: ``fill`` for the hosts the list does not reach."""
    return list(values) + [fill] * (count - len(values))


class ActionModule(ActionBase):
    """Looks up the pinned pods' names (once per UID, per node), then builds the report."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        hosts = args["hosts"]
        if len(args["outcomes"]) != len(hosts):
            return dict(result, failed=True, msg="fleet_report: %d hosts but %d outcomes" % (len(hosts), len(args["outcomes"])))
        names = [str(name) if name else "" for name in _padded(args["node_names"], len(hosts), "")]
        outcomes = self._outcomes(args, hosts, names)
        by_node = {outcome.get("node") or names[i] or hosts[i]: outcome for i, outcome in enumerate(outcomes)}
        known, source = self._pod_names(args["pod_names"], by_node)
        states, states_source = self._node_states(args, sorted(by_node)) if args["node_state"] else (None, "off: remediate_require_api is false")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        report = _report.build(args["kind"], hosts, outcomes, names, args["stopped"] or None, known, source, stamp,
                               args["lost"], args["in_progress"], inventory_option((task_vars or {}).get("ansible_inventory_sources")),
                               states, states_source, args["rollout_ended"], args["in_progress_batch"])
        try:
            _report.write(args["path"], report)
        except OSError as error:
            return dict(result, failed=True, msg="could not write the fleet report into %s: %s" % (args["path"], error))
        # What the run says on the terminal: the nodes whose procedure starts after this report as they are now.
        headline = _report.progress_headline(report)
        result.update(changed=False, report=report, path=args["path"], headline=headline)
        return set_host_facts(self, result, {"numa_drift_report": report, "numa_drift_report_pods": known})

    @staticmethod
    def _outcomes(args: Mapping[str, Any], hosts: List[str], names: List[str]) -> List[Dict[str, Any]]:
        """Each host's outcome: its own, else the one the first pass settled; the probe's from its result."""
        given = [dict(outcome) if isinstance(outcome, Mapping) else {} for outcome in args["outcomes"]]
        if args["kind"] == "probe":
            api = _padded(args["probe_api"], len(hosts), True)
            services = _padded(args["probe_services"], len(hosts), None)
            return [_remediate.probe_outcome(host, {"result": result, "node": name, "api": boolean(flag, strict=False),
                                                    "service": service})
                    for host, result, name, flag, service in zip(hosts, given, names, api, services)]
        settled = args["settled"]
        return [outcome or dict(settled.get(host) or {}) for host, outcome in zip(hosts, given)]

    @staticmethod
    def _node_states(args: Mapping[str, Any], wanted: List[str]) -> Tuple[Optional[Dict[str, Any]], str]:
        """Node name -> its state now (``_cordon.node_state``) for the ``wanted`` names, from one Node list; or (None, why not)."""
        nodes, failure = nodes_within(POD_LOOKUP_TIMEOUT, args["pod_names"].get("kubeconfig"), args["pod_names"].get("context"))
        if nodes is None:
            return None, "not looked up: %s" % failure
        return {name: _cordon.node_state(nodes.get(name), args["annotation_prefix"]) for name in wanted}, "api"

    @staticmethod
    def _pod_names(options: Mapping[str, Any], by_node: Mapping[str, Mapping[str, Any]]) -> Tuple[Dict[str, Any], str]:
        """UID -> name/namespace (None: not in the API), and where the names came from."""
        known = dict(options["known"])
        wanted = _report.uids_to_look_up(by_node, known)
        if not options["from_api"]:
            return known, "off: pod UIDs from the checkpoints only"
        if not wanted:
            return known, "api"
        found: Dict[str, Any] = {}

        def look_up() -> Optional[ApiFailure]:  # any other exception is handed back by call_within too
            try:
                api = Api(options.get("kubeconfig"), options.get("context"))
                for node, uids in sorted(wanted.items()):
                    listing = api.list("v1", "Pod", field_selector="spec.nodeName=%s" % node)
                    found.update(_report.names_from_listing(uids, listing.get("items") or []))
            except ApiFailure as failure:
                return failure
            return None

        finished, failure = call_within(POD_LOOKUP_TIMEOUT, look_up, "pod-name lookup")
        if not finished:
            return known, "API did not answer within %g s, pod UIDs from the checkpoints only" % POD_LOOKUP_TIMEOUT
        if failure is not None and getattr(failure, "status", 0) in (401, 403):
            # Reached, but the credentials may not list pods (RBAC: list on pods, cluster-wide).
            return known, "API refused the pod lookup, pod UIDs from the checkpoints only: %s" % failure
        if failure is not None:
            return known, "API not reachable, pod UIDs from the checkpoints only: %s" % failure
        known.update(found)
        return known, "api"
