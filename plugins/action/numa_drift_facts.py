# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.numa_drift_facts: the node reads, the controller assesses.

One read per host: the node reader (``_node.plan_reader``) reads exactly what the engine's discovery declares
(``_probe.read_plan``) and what earlier runs on this host learned (``numa_drift_read_paths``), with credentials
withheld or redacted on the node. Where Ansible pipelines modules and the host's interpreter is known, the
reader goes to the node's Python on standard input as one small program (no AnsiballZ wrapper); elsewhere the
``__node_read`` module runs it (and discovers the interpreter on first contact). The engine assesses the answer
here, in memory (plugin_utils/_snapshot.py); a path the answer lacked is read in one more run and remembered in
the host's facts, so the next run reads it at once. The read has a time limit (``read_timeout``). A repairable
node's advice names the host.

ansible-core's own action plugins are the model for what is used of ``ActionBase``: ``_execute_module``,
``_low_level_execute_command`` and ``_compute_environment_string`` (as ``raw`` and ``script``),
``_discovered_interpreter_key`` (as ``wait_for_connection``), ``_remove_tmp_path``.
"""

from __future__ import annotations

import contextlib
import signal
import time
from typing import Any, Dict, Iterator, List, Optional

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator, ValidationResult
from ansible.module_utils.errors import UnsupportedError
from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import REPAIRABLE_VERDICTS, inventory_option, remediate_advice
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import (
    FACTS_OPTIONS_SPEC,
    OptionError,
    probe_arguments,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.options import check_overrides
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import read_plan
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _snapshot
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import type_failure
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._node_reader import NodeReader

MAX_ROUNDS = 4
# The controller's CPU for one answer: an honest node costs milliseconds (its largest checkpoint seconds), every parser
# on node bytes is linear and an answer is at most _snapshot.MAX_ANSWER_BYTES; this bounds what nothing else does.
ASSESS_SECONDS = 30
LEARNED_FACT = "numa_drift_read_paths"
VERSIONS_FACT = "numa_drift_kubelet_versions"


class ReadTimeout(Exception):
    """The node reader did not answer within the task's ``read_timeout``."""


class AssessTimeout(Exception):
    """The assessment of one answer took longer than :data:`ASSESS_SECONDS`."""


@contextlib.contextmanager
def _time_limit(seconds: float, error: type = ReadTimeout) -> Iterator[None]:
    """Raise ``error`` in this process after ``seconds`` (SIGALRM, as ansible-core's task ``timeout``); a shorter
    timer already set (the task's own ``timeout``) is left to fire first."""
    previous_delay = signal.getitimer(signal.ITIMER_REAL)[0]
    if previous_delay and previous_delay <= seconds:
        yield
        return

    def expired(_signum: int, _frame: Any) -> None:
        raise error()

    started = time.monotonic()
    previous_handler = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay:
            signal.setitimer(signal.ITIMER_REAL, max(previous_delay - (time.monotonic() - started), 0.001))


class ActionModule(NodeReader, ActionBase):
    """Read the node once, assess here."""

    TRANSFERS_FILES = False

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        task_vars = task_vars or {}
        failure = type_failure(FACTS_OPTIONS_SPEC, self._task.args)
        if failure:
            return dict(result, **failure)
        validated = ArgumentSpecValidator(FACTS_OPTIONS_SPEC).validate(dict(self._task.args))
        if validated.error_messages:
            return dict(result, failed=True, msg=self._option_errors(validated))
        params = validated.validated_parameters
        root, timeout, arguments = params["root"] or "/", params["read_timeout"], probe_arguments(params)
        try:
            check_overrides(arguments["kubelet_flags"], arguments["policy"], arguments["reserved_memory"])
        except OptionError as error:
            return dict(result, failed=True, msg=str(error))
        known: List[str] = [item for item in task_vars.get(LEARNED_FACT) or [] if isinstance(item, str)]
        learned = list(known)
        versions = _snapshot.known_versions(task_vars.get(VERSIONS_FACT))
        rules, follows = read_plan(arguments)
        rules += _snapshot.learned_rules(known)
        entries: Dict[str, Dict[str, Any]] = {}
        host_facts: Dict[str, Any] = {}
        try:
            for _round in range(MAX_ROUNDS):
                with _time_limit(timeout):
                    read = self._read_node(root, rules, follows, versions, task_vars)
                host_facts.update(read.pop("ansible_facts", {}))
                if read.get("failed"):
                    return dict(result, **read, ansible_facts=host_facts) if host_facts else dict(result, **read)
                for key, records in read["entries"].items():
                    entries.setdefault(key, {}).update(records)
                try:
                    with _time_limit(ASSESS_SECONDS, AssessTimeout):
                        facts = _snapshot.assess(entries, root, arguments)
                    break
                except _snapshot.NotRead as missing:
                    rules, together = _snapshot.missed_rules(missing)
                    for each in together:
                        if len(learned) < _snapshot.MAX_LEARNED and _snapshot.remembered(each) not in learned:
                            learned.append(_snapshot.remembered(each))
            else:
                return dict(result, failed=True, msg="the node's answers still lack what the probe reads after %d reads (a node with more "
                            "files in kubelet's places than the reader's budget allows?)" % MAX_ROUNDS)
        except ReadTimeout:
            return dict(result, failed=True, msg="the node reader did not answer within %s s (read_timeout)" % timeout)
        except AssessTimeout:
            return dict(result, failed=True, msg="the node's answer took more than %s s to assess: refused" % ASSESS_SECONDS)
        except QuantityError as error:
            return dict(result, failed=True, msg="drift_bound: %s" % error)
        except OptionError as error:
            return dict(result, failed=True, msg=str(error))
        except OSError as error:
            return dict(result, failed=True, msg="cannot read the node under %s: %s" % (root, error))
        result.update(changed=False, numa_drift=facts)
        if learned != known:
            host_facts[LEARNED_FACT] = learned
        seen = _snapshot.versions_seen(entries)
        if seen and seen != versions:
            host_facts[VERSIONS_FACT] = seen
        if host_facts:
            result["ansible_facts"] = host_facts
        self._advise_for(result, task_vars.get("inventory_hostname"), inventory_option(task_vars.get("ansible_inventory_sources")))
        self._remove_tmp_path(self._connection._shell.tmpdir)
        return result

    def _option_errors(self, validated: ValidationResult) -> str:
        """Ansible's messages for the task's arguments, an unknown option's with the supported ones (as a module's)."""
        return "; ".join("Unsupported parameters for (%s) module: %s" % (self._task.action, error.msg) if isinstance(error, UnsupportedError)
                         else error.msg for error in validated.errors.errors)

    @staticmethod
    def _advise_for(result: Dict[str, Any], host: Any, inventory: str) -> None:
        """A repairable node's advice names the remediate playbook limited to this host, with this run's inventory
        (the node only knows "NODE" and "INVENTORY")."""
        facts = result.get("numa_drift")
        if host and isinstance(facts, dict) and facts.get("verdict") in REPAIRABLE_VERDICTS:
            facts["advice"] = remediate_advice(str(host), inventory)
