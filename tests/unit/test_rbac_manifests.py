# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RBAC the collection ships (extensions/rbac/: the main file and the optional drain rules) is the one
docs/rollout.md lists, rule for rule, and what the code calls; tests/integration/test_controlplane.py shows against
a real API server that each rule is needed."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Set, Tuple

import yaml

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFESTS = os.path.join(CHECKOUT, "extensions", "rbac", "nodeops-numa-drift.yml")
DRAIN_MANIFESTS = os.path.join(CHECKOUT, "extensions", "rbac", "nodeops-numa-drift-drain.yml")
DRAIN_HEADING = "\n### Drain (optional)\n"
ROLLOUT_DOC = os.path.join(CHECKOUT, "docs", "rollout.md")
SERVICE_ACCOUNT = {"kind": "ServiceAccount", "name": "nodeops-numa-drift", "namespace": "kube-system"}

Rule = Tuple[str, str, str, str, str]  # group, resource, verb, namespace ("cluster"), name ("any")


def documents(path: str = MANIFESTS) -> List[Dict[str, Any]]:
    """The objects of a manifest file (one document: a v1 List)."""
    with open(path, encoding="utf-8") as handle:
        listing = yaml.safe_load(handle)
    assert listing["apiVersion"] == "v1" and listing["kind"] == "List", listing.get("kind")
    return listing["items"]


def manifest_rules(path: str = MANIFESTS) -> Set[Rule]:
    rules = set()
    for document in documents(path):
        if document["kind"] not in ("Role", "ClusterRole"):
            continue
        where = document["metadata"].get("namespace", "cluster")
        for rule in document["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        for name in rule.get("resourceNames") or ["any"]:
                            rules.add((group, resource, verb, where, name))
    return rules


def documented_rules(drain: bool = False) -> Set[Rule]:
    """The rows of the table under docs/rollout.md's "## RBAC" (``drain``: of its "### Drain (optional)")."""
    with open(ROLLOUT_DOC, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("\n## RBAC\n", 1)[1].split("\n## ", 1)[0]
    assert DRAIN_HEADING in section, "docs/rollout.md's RBAC section has no %r" % DRAIN_HEADING.strip()
    section = section.split(DRAIN_HEADING, 1)[1 if drain else 0]
    rules = set()
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not cells[0].startswith("`"):
            continue
        group = cells[0].strip("`").replace('""', "")
        names = re.findall(r"`([^`]+)`", cells[4]) or ["any"]
        for verb in re.findall(r"`([a-z]+)`", cells[2]):
            for name in names:
                rules.add((group, cells[1].strip("`"), verb, cells[3].strip("`"), name))
    return rules


def test_the_documented_rules_are_the_shipped_rules() -> None:
    for drain, path in ((False, MANIFESTS), (True, DRAIN_MANIFESTS)):
        documented, shipped = documented_rules(drain), manifest_rules(path)
        assert documented, "no RBAC table found in docs/rollout.md (drain: %s)" % drain
        assert documented == shipped, {"only in docs/rollout.md": documented - shipped, "only in %s" % os.path.basename(path): shipped - documented}


def test_the_drain_rules_add_only_what_the_drain_needs_to_the_same_service_account() -> None:
    """kubernetes.core.k8s_drain: reads the Node, lists its pods, evicts each, reads each evicted pod until it is gone
    (and patches the Node when it is not cordoned yet; the role cordons first)."""
    docs = documents(DRAIN_MANIFESTS)
    assert sorted(d["kind"] for d in docs) == ["ClusterRole", "ClusterRoleBinding"]
    binding = next(d for d in docs if d["kind"] == "ClusterRoleBinding")
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    assert binding["subjects"] == [SERVICE_ACCOUNT] and binding["roleRef"]["name"] == role["metadata"]["name"]
    drain = manifest_rules(DRAIN_MANIFESTS)
    assert drain == {("", "pods", "get", "cluster", "any"), ("", "pods/eviction", "create", "cluster", "any")}
    assert not drain & manifest_rules(), "a drain rule the main ClusterRole grants already"
    granted = {(group, resource, verb) for group, resource, verb, _where, _name in drain | manifest_rules()}
    assert {("", "nodes", "get"), ("", "nodes", "patch"), ("", "pods", "list")} <= granted


def test_every_role_is_bound_to_the_service_account_and_nothing_else_is_granted() -> None:
    docs = documents()
    roles = {(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")) for d in docs if d["kind"] in ("Role", "ClusterRole")}
    bound = set()
    for binding in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        assert binding["subjects"] == [SERVICE_ACCOUNT], binding
        ref = binding["roleRef"]
        bound.add((ref["kind"], ref["name"], binding["metadata"].get("namespace") if ref["kind"] == "Role" else None))
    assert bound == roles
    assert sorted(d["kind"] for d in docs) == sorted(["ServiceAccount", "ClusterRole", "Role", "Role", "ClusterRoleBinding",
                                                      "RoleBinding", "RoleBinding"])
    # No wildcard, no write beyond what the table says.
    assert not any("*" in field for rule in manifest_rules() for field in rule)


def test_the_names_are_the_playbooks_defaults() -> None:
    """The Lease and the pause ConfigMap the roles name are the playbooks' defaults and the docs' example."""
    with open(os.path.join(CHECKOUT, "playbooks", "remediate.yml"), encoding="utf-8") as handle:
        playbook = handle.read()
    with open(os.path.join(CHECKOUT, "playbooks", "tasks", "rollout_gate.yml"), encoding="utf-8") as handle:
        gate = handle.read()
    with open(ROLLOUT_DOC, encoding="utf-8") as handle:
        doc = handle.read()
    rules = manifest_rules()
    assert "numa_drift_lock_name | default('nodeops-numa-drift')" in playbook
    assert "numa_drift_lock_namespace | default('kube-system')" in playbook
    assert ("coordination.k8s.io", "leases", "update", "kube-system", "nodeops-numa-drift") in rules
    assert "numa_drift_pause_namespace | default('kube-system')" in gate
    assert "kubectl -n kube-system create configmap numa-drift-rollout" in doc
    assert ("", "configmaps", "get", "kube-system", "numa-drift-rollout") in rules


def test_the_code_calls_only_what_the_rules_allow() -> None:
    """Every API call of the action plugins and the role is covered by a rule (the reverse is the integration test)."""
    calls = set()
    plugins = os.path.join(CHECKOUT, "plugins", "action")
    for name in sorted(os.listdir(plugins)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(plugins, name), encoding="utf-8") as handle:
            for verb, version, kind in re.findall(r'(?:api|_api\(args\))\.(get|list|create|replace|merge_patch|delete)\("([^"]+)", "(\w+)"', handle.read()):
                calls.add((version.rsplit("/", 1)[0] if "/" in version else "", kind.lower() + "s",
                           {"replace": "update", "merge_patch": "patch"}.get(verb, verb)))
    assert calls == {("", "nodes", "get"), ("", "nodes", "patch"), ("", "nodes", "list"), ("", "pods", "list"),
                     ("", "configmaps", "get"), ("coordination.k8s.io", "leases", "get"),
                     ("coordination.k8s.io", "leases", "create"), ("coordination.k8s.io", "leases", "update")}, calls
    granted = {(group, resource, verb) for group, resource, verb, _where, _name in manifest_rules()}
    # The role's own calls: k8s_info on the Node (get), k8s state=present of an Event (create).
    assert calls | {("", "events", "create")} == granted
