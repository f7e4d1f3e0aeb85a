# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__rollout_triage: which nodes go through the remediate procedure.

The decisions are pure functions in ``plugins/plugin_utils/_triage.py``; this plugin lists the cluster's Nodes once
when some node that needs nothing may carry an unfinished earlier run of ours.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _triage
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import set_host_facts
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import nodes_within

# Seconds the Node list may take (a black-holed API must not stall the rollout: the nodes then keep their note).
NODE_LIST_TIMEOUT = 30.0

ARGUMENT_SPEC = {
    "hosts": {"type": "list", "elements": "str", "required": True},
    # Each host's registered first-pass plan (remediate_triage): plan and outcome, or nothing to decide from.
    "triages": {"type": "list", "elements": "raw", "required": True},
    # Each host's registered probe result (remediate_probe): ``unreachable`` when the probe did not reach it.
    "probes": {"type": "list", "elements": "raw", "required": True},
    "annotation_prefix": {"type": "str", "default": "numa-drift.nodeops.io"},
    "kubeconfig": {"type": "path"},
    "context": {"type": "str"},
}


class ActionModule(ActionBase):
    """Splits the targeted hosts into those that need the procedure and those settled by their probe."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        hosts = args["hosts"]
        if not len(args["triages"]) == len(args["probes"]) == len(hosts):
            return dict(result, failed=True, msg="rollout_triage: %d hosts but %d plans and %d probes" % (
                len(hosts), len(args["triages"]), len(args["probes"])))
        triages = [triage if isinstance(triage, Mapping) else {} for triage in args["triages"]]
        probes = [probe if isinstance(probe, Mapping) else {} for probe in args["probes"]]
        nodes, failure = self._nodes(args) if _triage.needs_earlier_run_check(triages) else ({}, "")
        work, settled = _triage.split(hosts, triages, probes, nodes, failure, args["annotation_prefix"])
        result.update(changed=False, work=work, settled=sorted(settled), msg=_triage.summary(hosts, work, settled))
        return set_host_facts(self, result, {"numa_drift_targets": hosts, "numa_drift_work_hosts": work, "numa_drift_settled": settled,
                                             "numa_drift_unreached": _triage.unreached(settled)})

    @staticmethod
    def _nodes(args: Mapping[str, Any]) -> Tuple[Optional[Dict[str, Dict[str, Any]]], str]:
        """The cluster's Nodes by name, or (None, why not)."""
        return nodes_within(NODE_LIST_TIMEOUT, args["kubeconfig"], args["context"])
