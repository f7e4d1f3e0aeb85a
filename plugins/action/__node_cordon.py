# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__node_cordon: cordon ownership on a Node, on the controller."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _cordon
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import set_host_facts
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s import CONFLICT_RETRIES, Api, ApiFailure

ARGUMENT_SPEC = {
    "name": {"type": "str", "required": True},
    "state": {"type": "str", "required": True, "choices": ["cordoned", "uncordoned", "annotated", "finished"]},
    "annotation_prefix": {"type": "str", "default": "numa-drift.nodeops.io"},
    "reason": {"type": "str"},
    "cordoned_by_us": {"type": "bool", "default": False},
    "last_outcome": {"type": "str", "default": ""},
    "annotations": {"type": "dict", "default": {}},
    "outcome": {"type": "dict"},
    "kubeconfig": {"type": "path"},
    "context": {"type": "str"},
}


class ActionModule(ActionBase):
    """Reads the Node, decides from what it sees, writes one merge patch guarded by its resourceVersion."""

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            api = Api(args["kubeconfig"], args["context"])
            result.update(getattr(self, "_" + args["state"])(api, args))
            if args["outcome"] is not None:
                set_host_facts(self, result, {"remediate_outcome": self._outcome(args["outcome"], result)})
        except ApiFailure as failure:
            result.update(failed=True, msg="Node %s: %s" % (args["name"], failure))
        return result

    @staticmethod
    def _outcome(outcome: Dict[str, Any], result: Dict[str, Any]) -> Dict[str, Any]:
        """The remediate role's outcome record with what this call found (cordon ownership, a note)."""
        updated = _cordon.with_note(outcome, result.get("note") or "")
        if "cordoned_by_us" in result:
            updated["cordoned_by_us"] = result["cordoned_by_us"]
        return updated

    def _read(self, api: Api, name: str) -> Dict[str, Any]:
        node = api.get("v1", "Node", name)
        if node is None:
            raise ApiFailure("not found in the API (set remediate_node_name to the Node's name)", 404)
        return node

    def _write(self, api: Api, name: str, decide: Callable[[Dict[str, Any]], Optional[Dict[str, Any]]]) -> Dict[str, Any]:
        """Apply ``decide(node)`` (a patch or None) to a fresh read, again after a 409; the node it acted on."""
        for _attempt in range(CONFLICT_RETRIES):
            node = self._read(api, name)
            patch = decide(node)
            if patch is None or self._task.check_mode:
                return {"node": node, "changed": patch is not None}
            try:
                return {"node": api.merge_patch("v1", "Node", name, patch), "changed": True}
            except ApiFailure as failure:
                if failure.status != 409:
                    raise
        raise ApiFailure("the Node kept changing under us (%d conflicts in a row)" % CONFLICT_RETRIES, 409)

    def _cordoned(self, api: Api, args: Dict[str, Any]) -> Dict[str, Any]:
        prefix, seen = args["annotation_prefix"], {}

        def decide(node: Dict[str, Any]) -> Optional[Dict[str, Any]]:
            seen.update(_cordon.ownership(node, prefix))
            return _cordon.cordon_patch(node, prefix, args["reason"])

        written = self._write(api, args["name"], decide)
        by_us = seen["cordoned_by_us"] or (written["changed"] and not seen["cordoned_before"])
        return {"changed": written["changed"], "cordoned_before": seen["cordoned_before"], "cordoned_by_us": by_us}

    def _uncordoned(self, api: Api, args: Dict[str, Any]) -> Dict[str, Any]:
        written = self._write(api, args["name"], lambda node: _cordon.uncordon_patch(
            node, args["annotation_prefix"], args["cordoned_by_us"], args["last_outcome"]))
        return {"changed": written["changed"], "uncordoned": args["cordoned_by_us"]}

    def _annotated(self, api: Api, args: Dict[str, Any]) -> Dict[str, Any]:
        patch = {"metadata": {"annotations": args["annotations"]}}
        if not self._task.check_mode:
            api.merge_patch("v1", "Node", args["name"], patch)
        return {"changed": True}

    def _finished(self, api: Api, args: Dict[str, Any]) -> Dict[str, Any]:
        prefix, name, seen = args["annotation_prefix"], args["name"], {}
        try:
            node = api.get("v1", "Node", name)
        except ApiFailure as failure:  # a node that needs nothing is not failed for an unreachable API
            return {"changed": False, "note": _cordon.UNCHECKED % failure}
        if node is None:
            return {"changed": False, "note": _cordon.UNCHECKED % "no such Node"}
        earlier = _cordon.earlier_run(node, prefix)
        if not earlier["ours"]:
            return {"changed": False, "note": ""}

        def decide(fresh: Dict[str, Any]) -> Optional[Dict[str, Any]]:
            seen.update(_cordon.earlier_run(fresh, prefix))
            if not seen.get("ours") or not seen.get("finish"):
                return None
            return _cordon.uncordon_patch(fresh, prefix, True, args["last_outcome"])

        written = self._write(api, name, decide) if earlier["finish"] else {"changed": False}
        final = seen or earlier
        return {"changed": written["changed"], "cordoned_by_us": bool(final.get("cordoned")),
                "note": _cordon.earlier_run_message(final, name, prefix) if final.get("ours") else ""}
