# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__fleet_report: the fleet report's data, pinned pods named from the API.

It also renders report.html (``_report.render_html``: Jinja2 with HTML autoescaping, which
ansible.builtin.template does not do), so that nothing a node wrote reaches the page as markup.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, Mapping, Optional, Tuple

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _report
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import Api, ApiFailure

# Seconds the whole pod-name lookup may take (a black-holed API must not stall the report).
POD_LOOKUP_TIMEOUT = 10.0

ARGUMENT_SPEC = {
    "kind": {"type": "str", "required": True, "choices": ["probe", "remediate"]},
    "hosts": {"type": "list", "elements": "str", "required": True},
    "outcomes": {"type": "list", "elements": "raw", "required": True},
    "node_names": {"type": "list", "elements": "raw", "default": []},
    "lost": {"type": "list", "elements": "str", "default": []},
    "in_progress": {"type": "list", "elements": "str", "default": []},
    "stopped": {"type": "raw"},
    "pod_names": {"type": "dict", "default": {}, "options": {
        "from_api": {"type": "bool", "default": True},
        "known": {"type": "dict", "default": {}},
        "kubeconfig": {"type": "path"},
        "context": {"type": "str"},
    }},
}


class ActionModule(ActionBase):
    """Looks up the pinned pods' names (once per UID, per node), then builds the report."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        hosts = args["hosts"]
        outcomes = [dict(outcome) if isinstance(outcome, Mapping) else {} for outcome in args["outcomes"]]
        if len(outcomes) != len(hosts):
            return dict(result, failed=True, msg="fleet_report: %d hosts but %d outcomes" % (len(hosts), len(outcomes)))
        names = [str(name) if name else "" for name in args["node_names"]] + [""] * (len(hosts) - len(args["node_names"]))
        by_node = {outcome.get("node") or names[i] or hosts[i]: outcome for i, outcome in enumerate(outcomes)}
        known, source = self._pod_names(args["pod_names"], by_node)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        report = _report.build(args["kind"], hosts, outcomes, names, args["stopped"] or None, known, source, stamp,
                               args["lost"], args["in_progress"])
        result.update(changed=False, report=report, html=_report.render_html(report), pod_names=known)
        return result

    @staticmethod
    def _pod_names(options: Mapping[str, Any], by_node: Mapping[str, Mapping[str, Any]]) -> Tuple[Dict[str, Any], str]:
        """UID -> name/namespace (None: not in the API), and where the names came from."""
        known = dict(options["known"])
        wanted = _report.uids_to_look_up(by_node, known)
        if not options["from_api"]:
            return known, "off: pod UIDs from the checkpoints only"
        if not wanted:
            return known, "api"
        # The Kubernetes client has no timeout of its own (discovery and list alike): the lookup runs
        # in a daemon thread, and the report goes on without the names when it does not finish in time.
        found: Dict[str, Any] = {}
        failures = []

        def look_up() -> None:
            try:
                api = Api(options.get("kubeconfig"), options.get("context"))
                for node, uids in sorted(wanted.items()):
                    listing = api.list("v1", "Pod", field_selector="spec.nodeName=%s" % node)
                    found.update(_report.names_from_listing(uids, listing.get("items") or []))
            except ApiFailure as failure:
                failures.append(failure)

        thread = threading.Thread(target=look_up, name="pod-name lookup", daemon=True)
        thread.start()
        thread.join(POD_LOOKUP_TIMEOUT)
        if thread.is_alive():
            return known, "API did not answer within %g s, pod UIDs from the checkpoints only" % POD_LOOKUP_TIMEOUT
        if failures and failures[0].status in (401, 403):
            # Reached, but the credentials may not list pods (RBAC: list on pods, cluster-wide).
            return known, "API refused the pod lookup, pod UIDs from the checkpoints only: %s" % failures[0]
        if failures:
            return known, "API not reachable, pod UIDs from the checkpoints only: %s" % failures[0]
        known.update(found)
        return known, "api"
