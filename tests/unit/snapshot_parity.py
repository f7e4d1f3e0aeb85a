# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parity of the two ways to probe, on every node tree the unit tests build.

``numa_drift_facts`` reads a node with ``__node_read`` and assesses the snapshot on the controller
(plugin_utils/_snapshot.py); the probe module runs the engine on the node. Every ``probe()`` a unit test
makes is done both ways here, and the test fails unless the facts are the same: the read plan must
find everything the engine reads on every layout the tests know (kubeadm, k3s, RKE2, k0s, MicroK8s, EKS,
OpenShift, Kubespray, their custom paths and hostile files). Rounds beyond the first (a path the plan
could not foresee) are counted; a snapshot that cannot be exact (an unreadable file, a device, a link the
kernel would follow out of the copy) must be one the action plugin hands to the probe module. tests/unit/conftest.py installs it.
"""

from __future__ import annotations

import collections
import functools
import importlib
import inspect
import json
import sys
from typing import Any, Dict

TEMPORARY_PREFIX = "nodeops-numa-drift-node-"
COUNTS: Dict[str, int] = collections.Counter()
MAX_ROUNDS = 3


def snapshot_facts(root: str, arguments: Dict[str, Any]):
    """``(facts or None, rounds)``: the node read as the action plugin reads it, assessed from the snapshot."""
    snapshot = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.plugin_utils._snapshot")
    reader_module = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader")
    reader = reader_module.Reader(root, snapshot.FOLLOW)
    plan = snapshot.READ_PLAN + snapshot.rules_for(arguments, [])
    for rounds in range(1, MAX_ROUNDS + 1):
        for rule in plan:
            reader.gather(rule)
        facts, misses = snapshot.assess_snapshot(json.loads(json.dumps(reader.answer())), root, arguments)
        if facts is not None:
            return facts, rounds
        plan = snapshot.rules_for({}, misses)
    return None, MAX_ROUNDS


def install() -> None:
    """Wrap ``_probe.probe`` wherever it was imported, so that each call also checks parity."""
    probe_module = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._probe")
    facts_module = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts")
    snapshot = importlib.import_module("ansible_collections.nodeops.numa_drift.plugins.plugin_utils._snapshot")
    original = probe_module.probe
    if getattr(original, "parity", False):
        return
    signature = inspect.signature(original)

    @functools.wraps(original)
    def probe(*args: Any, **kwargs: Any):
        result = original(*args, **kwargs)
        arguments = dict(signature.bind(*args, **kwargs).arguments)
        root = str(arguments.pop("root", "/"))
        if TEMPORARY_PREFIX in root or root == "/":
            return result  # the snapshot's own assessment, or this machine
        expected = json.loads(json.dumps(facts_module.assessment_facts(result)))
        try:
            facts, rounds = snapshot_facts(root, arguments)
        except snapshot.UnsupportedSnapshot as error:
            COUNTS["handed to the probe module"] += 1
            assert "cannot be reproduced" in str(error) or "would follow the node's symbolic link" in str(error), error
            return result
        assert facts is not None, "the read plan still misses paths after %d rounds under %s" % (MAX_ROUNDS, root)
        COUNTS["rounds=%d" % rounds] += 1
        different = {key: (expected.get(key), facts.get(key)) for key in set(expected) | set(facts) if expected.get(key) != facts.get(key)}
        assert not different, "the snapshot's assessment differs from the node's: %r" % different
        return result

    probe.parity = True
    for module in list(sys.modules.values()):
        if module is not None and getattr(module, "probe", None) is original:
            module.probe = probe
