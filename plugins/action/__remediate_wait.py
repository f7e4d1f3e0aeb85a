# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__remediate_wait: poll kubelet's service or the Node, quietly.

The same polls an ``until``/``retries``/``delay`` loop makes (``attempts`` at most, ``delay`` seconds apart),
without a ``FAILED - RETRYING`` line for every poll of a wait that succeeds. The decisions are
``_remediate.wait_step``.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, Optional

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _remediate

ARGUMENT_SPEC = {
    "wait_for": {"type": "str", "required": True, "choices": ["kubelet_active", "kubelet_settled", "node_ready"]},
    "attempts": {"type": "int", "required": True},
    "delay": {"type": "int", "required": True},
    "status_command": {"type": "str"},
    "service_mode": {"type": "str", "default": "systemd"},
    "identity_regexp": {"type": "str", "default": ""},
    "identity": {"type": "str", "default": ""},
    "polls": {"type": "int", "default": 0},
    "node_name": {"type": "str"},
    "kubeconfig": {"type": "raw"},
    "context": {"type": "str"},
}


class ActionModule(ActionBase):
    """Polls with the shell module on the node (kubelet) or kubernetes.core.k8s_info (the Node, delegated)."""

    TRANSFERS_FILES = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        wait_for = args["wait_for"]
        if wait_for == "node_ready":
            module, module_args = "kubernetes.core.k8s_info", {"kind": "Node", "name": args["node_name"]}
            module_args.update({key: args[key] for key in ("kubeconfig", "context") if args[key] is not None})
            if isinstance(args["kubeconfig"], str) and self._connection.transport == "local":
                try:
                    module_args["kubeconfig"] = self._local_kubeconfig(args["kubeconfig"])
                except AnsibleError as error:
                    return dict(result, failed=True, msg=to_text(error))
        else:
            module, module_args = "ansible.legacy.command", {"_raw_params": args["status_command"], "_uses_shell": True}
        polled: Dict[str, Any] = {}
        done: Optional[bool] = None
        attempt = 0
        while done is None and attempt < max(1, args["attempts"]):
            if attempt:
                time.sleep(args["delay"])
            attempt += 1
            polled = self._execute_module(module_name=module, module_args=module_args, task_vars=task_vars)
            done = _remediate.wait_step(wait_for, polled, attempt, args)
        polled = {key: value for key, value in polled.items() if key not in ("failed", "changed", "invocation", "_ansible_no_log")}
        result.update(polled, changed=False, attempts=attempt)
        if not done:
            result.update(failed=True, msg=polled.get("msg") or "%s: not reached after %d polls %ds apart" % (wait_for, attempt, args["delay"]))
        return result

    def _local_kubeconfig(self, kubeconfig: str) -> str:
        """As kubernetes.core.k8s_info's action finds it on the controller: the files search path, vault-decrypted."""
        paths = [self._loader.get_real_file(self._find_needle("files", path), decrypt=True) for path in kubeconfig.split(os.pathsep)]
        return os.pathsep.join(paths)
