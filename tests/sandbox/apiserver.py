# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Kubernetes API server stand-in for the sandbox fleet, on 127.0.0.1 only.

Serves what ``kubernetes.core`` (k8s_info, k8s, k8s_drain), the python ``kubernetes`` client
and the kubelet stand-in use, with the real server's wire behaviour on those paths:

* discovery: ``/version``, ``/api``, ``/apis``, ``/api/v1``, ``/apis/policy``, ``/apis/policy/v1``;
* nodes: list (``labelSelector``, ``fieldSelector``), get, create, PUT and PATCH (JSON merge,
  strategic merge (a JSON merge where ``status.conditions``/``status.addresses`` merge by
  ``type``), JSON patch), the ``status`` subresource (only ``status`` changes there; the main
  resource ignores ``status``), ``dryRun``;
* pods: list (all namespaces or one, ``fieldSelector spec.nodeName=...``, ``labelSelector``), get,
  create, delete, ``pods/eviction`` (a pod annotated ``sandbox.nodeops.io/eviction-blocked: "true"``
  answers 429 like a PodDisruptionBudget would; one annotated ``sandbox.nodeops.io/eviction-lingers:
  "true"`` accepts the eviction but stays, Terminating, like a pod whose kubelet never confirms it
  stopped); policy/v1 poddisruptionbudgets (always empty);
* ``resourceVersion`` bumped on every write; 409 Conflict with a ``Status`` body when a PUT or
  PATCH carries a stale ``metadata.resourceVersion``; errors are ``Status`` objects;
* the node controllers' visible effects: the ``node.kubernetes.io/unschedulable`` taint follows
  ``spec.unschedulable``; ``not-ready``/``unreachable`` taints follow the Ready condition; a node
  whose kubelet stopped posting for ``--node-monitor-grace-period`` seconds turns Ready=Unknown.

* namespaced ``events`` and ``configmaps`` (core/v1) and ``leases`` (coordination.k8s.io/v1): list (all namespaces
  or one; ``fieldSelector`` such as ``involvedObject.name=...`` for events), get, create (``generateName``),
  PUT (a stale ``metadata.resourceVersion`` is a 409), PATCH, delete;

Test controls (never authenticated): ``GET /_sandbox/state``, ``GET /_sandbox/requests``,
``GET /_sandbox/audit`` (every successful write in order; a Lease's ``holder``, a Node's ``unschedulable``),
``POST /_sandbox/outage {"seconds": N, "mode": "unavailable"|"refuse"}`` (503 for every API
request, or the port closed: connection refused), ``DELETE /_sandbox/outage``,
``POST /_sandbox/faults {"method": "PATCH", "path": "<regex>", "code": 500, "count": 1}``,
``DELETE /_sandbox/faults``.

Usage::

    python tests/sandbox/apiserver.py --state FILE --port-file FILE [--port 0] [--token T]
        [--node-monitor-grace-period 40] [--exit-if-missing PATH] [--max-lifetime 7200]

The state file is read at start when it exists (``{"resourceVersion": n, "nodes": {...},
"pods": {...}}``) and rewritten after every write. The port file receives the bound port once
the server listens and is removed at exit. SIGTERM/SIGINT stop the server.
"""

from __future__ import annotations

import argparse
import calendar
import copy
import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
import uuid
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
KUBERNETES_VERSION = {
    "major": "1",
    "minor": "37",
    "gitVersion": "v1.37.2-sandbox",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.24.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}
EVICTION_BLOCKED_ANNOTATION = "sandbox.nodeops.io/eviction-blocked"
EVICTION_LINGERS_ANNOTATION = "sandbox.nodeops.io/eviction-lingers"
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
STOPPED_POSTING = "Kubelet stopped posting node status."
NEVER_POSTED = "Kubelet never posted node status."
DEFAULT_GRACE_SECONDS = 40.0
DEFAULT_MAX_LIFETIME = 7200.0
REQUEST_LOG_SIZE = 2000
MAX_BODY_BYTES = 8 * 1024 * 1024

# Strategic merge: lists merged element-wise by a key (the patchMergeKey of the Go types).
MERGE_KEYS: Dict[Tuple[str, ...], str] = {
    ("status", "conditions"): "type",
    ("status", "addresses"): "type",
    ("metadata", "ownerReferences"): "uid",
    ("spec", "containers"): "name",
    ("spec", "initContainers"): "name",
    ("spec", "volumes"): "name",
}
NODE_FIELDS = ("metadata.name", "spec.unschedulable")
# Namespaced kinds kept as plain objects: plural -> (apiVersion, kind, supported field selectors).
OBJECT_KINDS: Dict[str, Tuple[str, str, Tuple[str, ...]]] = {
    "events": ("v1", "Event", ("metadata.name", "metadata.namespace", "involvedObject.name", "involvedObject.kind",
                               "involvedObject.namespace", "involvedObject.uid", "reason", "type", "source")),
    "configmaps": ("v1", "ConfigMap", ("metadata.name", "metadata.namespace")),
    "leases": ("coordination.k8s.io/v1", "Lease", ("metadata.name", "metadata.namespace")),
}
AUDIT_LOG_SIZE = 5000
POD_FIELDS = ("metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "status.phase")


# --------------------------------------------------------------------------- errors and Status


class ApiError(Exception):
    """An error the API answers with a ``Status`` object."""

    def __init__(self, code: int, reason: str, message: str, details: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details


def status_object(code: int, reason: str, message: str, details: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def not_found(kind: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", '%s "%s" not found' % (kind, name), {"name": name, "kind": kind})


def conflict(kind: str, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        'Operation cannot be fulfilled on %s "%s": the object has been modified; please apply your changes to the latest version and try again'
        % (kind, name),
        {"name": name, "kind": kind},
    )


def invalid(kind: str, name: str, message: str) -> ApiError:
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s' % (kind, name, message), {"name": name, "kind": kind})


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


# --------------------------------------------------------------------------- time


def rfc3339(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def parse_rfc3339(text: str) -> Optional[float]:
    try:
        return float(calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------------------- patches


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _merge_keyed_list(current: Any, patch: List[Any], key: str, path: Tuple[str, ...]) -> List[Any]:
    result = copy.deepcopy(current) if isinstance(current, list) else []
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            result.append(copy.deepcopy(item))
            continue
        index = next((i for i, old in enumerate(result) if isinstance(old, dict) and old.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                del result[index]
        elif index is None:
            result.append(strategic_merge_patch({}, item, path))
        else:
            result[index] = strategic_merge_patch(result[index], item, path)
    return result


def strategic_merge_patch(target: Any, patch: Any, path: Tuple[str, ...] = ()) -> Any:
    """A strategic merge patch as the API applies it to the fields the sandbox serves.

    Maps merge like a JSON merge patch; lists with a merge key (``MERGE_KEYS``) merge element
    by element (``$patch: delete`` removes one); other lists replace; ``$``-directives such as
    ``$setElementOrder/...`` and ``$retainKeys`` are ignored, ``$patch: replace``/``delete`` on a
    map are honoured.
    """
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    result = {} if directive == "replace" or not isinstance(target, dict) else copy.deepcopy(target)
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        child_path = path + (key,)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list) and child_path in MERGE_KEYS:
            result[key] = _merge_keyed_list(result.get(key), value, MERGE_KEYS[child_path], child_path)
        else:
            merged = strategic_merge_patch(result.get(key), value, child_path)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
    return result


def _pointer_tokens(pointer: str) -> List[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError("invalid JSON pointer %r" % pointer)
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer[1:].split("/")]


def _resolve_parent(document: Any, tokens: List[str]) -> Tuple[Any, str]:
    parent = document
    for token in tokens[:-1]:
        parent = parent[int(token)] if isinstance(parent, list) else parent[token]
    return parent, tokens[-1]


def _pointer_get(document: Any, pointer: str) -> Any:
    value = document
    for token in _pointer_tokens(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def _pointer_add(document: Any, pointer: str, value: Any) -> Any:
    tokens = _pointer_tokens(pointer)
    if not tokens:
        return copy.deepcopy(value)
    parent, last = _resolve_parent(document, tokens)
    if isinstance(parent, list):
        parent.insert(len(parent) if last == "-" else int(last), copy.deepcopy(value))
    else:
        parent[last] = copy.deepcopy(value)
    return document


def _pointer_remove(document: Any, pointer: str) -> Any:
    parent, last = _resolve_parent(document, _pointer_tokens(pointer))
    removed = parent.pop(int(last)) if isinstance(parent, list) else parent.pop(last)
    return removed


def json_patch(document: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch; ``ValueError`` for a malformed patch or a failed ``test``."""
    if not isinstance(operations, list):
        raise ValueError("a JSON patch must be a list of operations")
    result = copy.deepcopy(document)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise ValueError("invalid JSON patch operation %r" % (operation,))
        op, path = operation["op"], operation["path"]
        try:
            if op == "add":
                result = _pointer_add(result, path, operation["value"])
            elif op == "remove":
                _pointer_remove(result, path)
            elif op == "replace":
                _pointer_get(result, path)
                _pointer_remove(result, path)
                result = _pointer_add(result, path, operation["value"])
            elif op == "move":
                value = _pointer_remove(result, operation["from"])
                result = _pointer_add(result, path, value)
            elif op == "copy":
                result = _pointer_add(result, path, _pointer_get(result, operation["from"]))
            elif op == "test":
                if _pointer_get(result, path) != operation["value"]:
                    raise ValueError("testing value %s failed" % path)
            else:
                raise ValueError("unknown JSON patch operation %r" % op)
        except (KeyError, IndexError, TypeError) as error:
            raise ValueError("%s %s: %s" % (op, path, error))
    return result


def apply_patch(current: Dict[str, Any], body: Any, content_type: str) -> Dict[str, Any]:
    kind = content_type.split(";")[0].strip().lower()
    if kind == "application/merge-patch+json":
        patched = merge_patch(current, body)
    elif kind == "application/strategic-merge-patch+json":
        patched = strategic_merge_patch(current, body)
    elif kind == "application/json-patch+json":
        try:
            patched = json_patch(current, body)
        except ValueError as error:
            raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: %s" % error)
    else:
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: "
                       "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json")
    if not isinstance(patched, dict):
        raise ApiError(422, "Invalid", "the patched object is not an object")
    return patched


# --------------------------------------------------------------------------- selectors


_SET_TERM = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQUALITY_TERM = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_./-]*)\s*$")
_EXISTS_TERM = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*$")


def split_selector(text: str) -> List[str]:
    """Split on commas that are not inside ``(...)``."""
    terms, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        terms.append(current)
    return [term for term in terms if term.strip()]


def parse_label_selector(text: str) -> List[Tuple[str, str, Tuple[str, ...]]]:
    """``(key, operator, values)`` per term; operators ``=``, ``!=``, ``in``, ``notin``, ``exists``, ``!``."""
    requirements = []
    for term in split_selector(text or ""):
        match = _SET_TERM.match(term)
        if match:
            values = tuple(value.strip() for value in match.group(3).split(",") if value.strip())
            requirements.append((match.group(1), match.group(2), values))
            continue
        match = _EQUALITY_TERM.match(term)
        if match:
            operator = "!=" if match.group(2) == "!=" else "="
            requirements.append((match.group(1), operator, (match.group(3),)))
            continue
        match = _EXISTS_TERM.match(term)
        if match:
            requirements.append((match.group(2), "!" if match.group(1) else "exists", ()))
            continue
        raise bad_request("unable to parse requirement: %r" % term.strip())
    return requirements


def labels_match(requirements: List[Tuple[str, str, Tuple[str, ...]]], labels: Optional[Dict[str, str]]) -> bool:
    labels = labels or {}
    for key, operator, values in requirements:
        present, value = key in labels, labels.get(key)
        if operator == "=" and value != values[0]:
            return False
        if operator == "!=" and present and value == values[0]:
            return False
        if operator == "in" and value not in values:
            return False
        if operator == "notin" and present and value in values:
            return False
        if operator == "exists" and not present:
            return False
        if operator == "!" and present:
            return False
    return True


def parse_field_selector(text: str, supported: Tuple[str, ...]) -> List[Tuple[str, bool, str]]:
    """``(field, equal, value)`` per term; unsupported fields are a 400 like the real server's."""
    terms = []
    for term in split_selector(text or ""):
        match = re.match(r"^\s*([A-Za-z.]+)\s*(==|!=|=)\s*(.*?)\s*$", term)
        if not match:
            raise bad_request("invalid field selector: %r" % term)
        if match.group(1) not in supported:
            raise bad_request('field label not supported: %s' % match.group(1))
        terms.append((match.group(1), match.group(2) != "!=", match.group(3)))
    return terms


def field_value(obj: Dict[str, Any], dotted: str) -> str:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "false" if dotted == "spec.unschedulable" else ""
    return str(value)


def fields_match(terms: List[Tuple[str, bool, str]], obj: Dict[str, Any]) -> bool:
    return all((field_value(obj, field) == value) == equal for field, equal, value in terms)


# --------------------------------------------------------------------------- node controllers


def condition(obj: Dict[str, Any], condition_type: str) -> Optional[Dict[str, Any]]:
    for item in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(item, dict) and item.get("type") == condition_type:
            return item
    return None


def ready_status(node: Dict[str, Any]) -> str:
    ready = condition(node, "Ready")
    return str(ready.get("status", "Unknown")) if ready else "Unknown"


def _with_taint(taints: List[Dict[str, Any]], key: str, effect: str, wanted: bool, now: float) -> List[Dict[str, Any]]:
    present = any(t.get("key") == key and t.get("effect") == effect for t in taints)
    if wanted and not present:
        return taints + [{"key": key, "effect": effect, "timeAdded": rfc3339(now)}]
    if not wanted and present:
        return [t for t in taints if not (t.get("key") == key and t.get("effect") == effect)]
    return taints


def reconcile_node_taints(node: Dict[str, Any], now: float) -> None:
    """What the node lifecycle controller and TaintNodesByCondition keep on a Node."""
    spec = node.setdefault("spec", {})
    if not spec.get("unschedulable"):
        spec.pop("unschedulable", None)
    ready = ready_status(node)
    taints = [t for t in spec.get("taints") or [] if isinstance(t, dict)]
    taints = _with_taint(taints, UNSCHEDULABLE_TAINT, "NoSchedule", bool(spec.get("unschedulable")), now)
    for effect in ("NoSchedule", "NoExecute"):
        taints = _with_taint(taints, NOT_READY_TAINT, effect, ready == "False", now)
        taints = _with_taint(taints, UNREACHABLE_TAINT, effect, ready == "Unknown", now)
    if taints:
        spec["taints"] = taints
    else:
        spec.pop("taints", None)


def unknown_conditions(node: Dict[str, Any], message: str, now: float) -> None:
    """The node lifecycle controller's view of a kubelet that stopped posting."""
    for item in (node.get("status") or {}).get("conditions") or []:
        if item.get("status") != "Unknown":
            item["lastTransitionTime"] = rfc3339(now)
        item["status"] = "Unknown"
        item["reason"] = "NodeStatusUnknown"
        item["message"] = message


def heartbeat_age(node: Dict[str, Any], now: float) -> Optional[float]:
    ready = condition(node, "Ready")
    beat = parse_rfc3339(ready.get("lastHeartbeatTime", "")) if ready else None
    return None if beat is None else now - beat


def node_object(
    name: str,
    labels: Optional[Dict[str, str]] = None,
    annotations: Optional[Dict[str, str]] = None,
    internal_ip: str = "127.0.0.1",
    capacity: Optional[Dict[str, str]] = None,
    allocatable: Optional[Dict[str, str]] = None,
    unschedulable: bool = False,
    kubelet_version: str = "v1.34.4",
    now: Optional[float] = None,
) -> Dict[str, Any]:
    """A registered Node whose kubelet has not posted status yet (Ready=Unknown)."""
    now = time.time() if now is None else now
    all_labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
    }
    all_labels.update(labels or {})
    stamp = rfc3339(now)
    conditions = [
        {"type": kind, "status": "Unknown", "lastHeartbeatTime": stamp, "lastTransitionTime": stamp,
         "reason": "NodeStatusNeverUpdated", "message": NEVER_POSTED}
        for kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
    ]
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels, "annotations": dict(annotations or {})},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {
            "capacity": dict(capacity or {"cpu": "4", "memory": "8Gi", "pods": "110"}),
            "allocatable": dict(allocatable or capacity or {"cpu": "4", "memory": "7Gi", "pods": "110"}),
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": internal_ip}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": uuid.uuid5(uuid.NAMESPACE_DNS, name).hex,
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_URL, name)),
                "bootID": str(uuid.uuid4()),
                "kernelVersion": "6.1.0-sandbox-amd64",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.7.24",
                "kubeletVersion": kubelet_version,
                "kubeProxyVersion": kubelet_version,
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }
    reconcile_node_taints(node, now)
    return node


def pod_object(
    namespace: str,
    name: str,
    node_name: str,
    uid: Optional[str] = None,
    owner_kind: Optional[str] = "ReplicaSet",
    owner_name: Optional[str] = None,
    labels: Optional[Dict[str, str]] = None,
    annotations: Optional[Dict[str, str]] = None,
    memory: str = "1Gi",
    cpu: str = "1",
    phase: str = "Running",
) -> Dict[str, Any]:
    """A running pod bound to ``node_name`` (Guaranteed: requests = limits)."""
    owners = []
    if owner_kind:
        owners.append({
            "apiVersion": "apps/v1", "kind": owner_kind, "name": owner_name or name.rsplit("-", 1)[0],
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, "%s/%s/%s" % (namespace, owner_kind, owner_name or name))),
            "controller": True, "blockOwnerDeletion": True,
        })
    resources = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"cpu": cpu, "memory": memory}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": namespace, "uid": uid or str(uuid.uuid4()),
            "labels": dict(labels or {}), "annotations": dict(annotations or {}), "ownerReferences": owners,
        },
        "spec": {
            "nodeName": node_name, "restartPolicy": "Always", "schedulerName": "default-scheduler",
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": resources}],
        },
        "status": {
            "phase": phase, "qosClass": "Guaranteed", "hostIP": "127.0.0.1", "podIP": "10.244.0.%d" % (zlib.crc32(name.encode()) % 250 + 2),
            "conditions": [{"type": kind, "status": "True"} for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")],
            "containerStatuses": [{
                "name": "app", "ready": True, "started": True, "restartCount": 0, "image": "registry.k8s.io/pause:3.10",
                "imageID": "registry.k8s.io/pause@sha256:" + hashlib.sha256(b"pause:3.10").hexdigest(),
                "containerID": "containerd://" + hashlib.sha256(name.encode()).hexdigest(),
                "state": {"running": {"startedAt": rfc3339(time.time())}},
            }],
        },
    }


# --------------------------------------------------------------------------- the store


def _pod_key(namespace: str, name: str) -> str:
    return "%s/%s" % (namespace, name)


def _listed(obj: Dict[str, Any]) -> Dict[str, Any]:
    """Items of a list carry no kind/apiVersion, as the real server sends them."""
    item = copy.deepcopy(obj)
    item.pop("kind", None)
    item.pop("apiVersion", None)
    return item


class Store:
    """Nodes and pods in memory, one lock, saved to a JSON file after every write."""

    def __init__(self, path: Optional[str], grace_seconds: float = DEFAULT_GRACE_SECONDS) -> None:
        self.path = path
        self.grace_seconds = grace_seconds
        self.lock = threading.RLock()
        self.resource_version = 1
        self.nodes: Dict[str, Dict[str, Any]] = {}
        self.pods: Dict[str, Dict[str, Any]] = {}
        self.objects: Dict[str, Dict[str, Dict[str, Any]]] = {plural: {} for plural in OBJECT_KINDS}
        self.audit: List[Dict[str, Any]] = []
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                self._load(json.load(handle))

    def _load(self, document: Dict[str, Any]) -> None:
        self.resource_version = int(document.get("resourceVersion", 1))
        now = time.time()
        for node in (document.get("nodes") or {}).values():
            self._admit_new(node, now)
            self.nodes[node["metadata"]["name"]] = node
        for pod in (document.get("pods") or {}).values():
            self._admit_new(pod, now)
            meta = pod["metadata"]
            self.pods[_pod_key(meta.get("namespace", "default"), meta["name"])] = pod
        for plural, objects in (document.get("objects") or {}).items():
            if plural in self.objects:
                self.objects[plural] = dict(objects)

    def snapshot(self) -> Dict[str, Any]:
        with self.lock:
            return {"resourceVersion": self.resource_version, "nodes": copy.deepcopy(self.nodes), "pods": copy.deepcopy(self.pods),
                    "objects": copy.deepcopy(self.objects)}

    def _audit(self, verb: str, kind: str, namespace: str, name: str, obj: Optional[Dict[str, Any]]) -> None:
        """Every successful write, in order (GET /_sandbox/audit): leases with their holder, nodes with spec.unschedulable."""
        entry: Dict[str, Any] = {"time": time.time(), "verb": verb, "kind": kind, "namespace": namespace, "name": name}
        if obj is not None:
            entry["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion")
            if kind == "Lease":
                entry["holder"] = (obj.get("spec") or {}).get("holderIdentity")
            if kind == "Node":
                entry["unschedulable"] = bool((obj.get("spec") or {}).get("unschedulable"))
        self.audit.append(entry)
        del self.audit[:-AUDIT_LOG_SIZE]

    def save(self) -> None:
        if not self.path:
            return
        document = self.snapshot()
        temporary = "%s.%d.tmp" % (self.path, threading.get_ident())
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, sort_keys=True)
        os.replace(temporary, self.path)

    def _admit_new(self, obj: Dict[str, Any], now: float) -> None:
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", rfc3339(now))
        if not meta.get("resourceVersion"):
            self.resource_version += 1
            meta["resourceVersion"] = str(self.resource_version)

    def _bump(self, obj: Dict[str, Any]) -> None:
        self.resource_version += 1
        obj["metadata"]["resourceVersion"] = str(self.resource_version)

    # -- nodes

    def list_nodes(self, label_selector: str = "", field_selector: str = "") -> Dict[str, Any]:
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, NODE_FIELDS)
        with self.lock:
            items = [
                _listed(node) for name, node in sorted(self.nodes.items())
                if labels_match(labels, node["metadata"].get("labels")) and fields_match(fields, node)
            ]
            return {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.resource_version)}, "items": items}

    def get_node(self, name: str) -> Dict[str, Any]:
        with self.lock:
            if name not in self.nodes:
                raise not_found("nodes", name)
            return copy.deepcopy(self.nodes[name])

    def create_node(self, body: Dict[str, Any], dry_run: bool = False) -> Dict[str, Any]:
        name = ((body.get("metadata") or {}).get("name") or "").strip()
        if not name:
            raise invalid("Node", "", "metadata.name: Required value: name or generateName is required")
        with self.lock:
            if name in self.nodes:
                raise ApiError(409, "AlreadyExists", 'nodes "%s" already exists' % name, {"name": name, "kind": "nodes"})
            node = copy.deepcopy(body)
            node.update({"apiVersion": "v1", "kind": "Node"})
            node["metadata"].pop("resourceVersion", None)
            node.setdefault("spec", {})
            node.setdefault("status", {})
            now = time.time()
            reconcile_node_taints(node, now)
            if dry_run:
                return node
            self._admit_new(node, now)
            self.nodes[name] = node
            self.save()
            return copy.deepcopy(node)

    def write_node(self, name: str, candidate: Dict[str, Any], subresource: str, require_version: bool, dry_run: bool) -> Dict[str, Any]:
        """Store ``candidate`` (a full object from PUT or a patch) with the API's update rules."""
        with self.lock:
            current = self.nodes.get(name)
            if current is None:
                raise not_found("nodes", name)
            wanted_version = str((candidate.get("metadata") or {}).get("resourceVersion") or "")
            if require_version and not wanted_version:
                raise invalid("Node", name, "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update")
            if wanted_version and wanted_version != current["metadata"]["resourceVersion"]:
                raise conflict("nodes", name)
            updated = self._merge_sections(current, candidate, subresource)
            reconcile_node_taints(updated, time.time())
            if dry_run:
                return updated
            if updated != current:
                self._bump(updated)
                self.nodes[name] = updated
                self._audit("update", "Node", "", name, updated)
                self.save()
            return copy.deepcopy(updated)

    @staticmethod
    def _merge_sections(current: Dict[str, Any], candidate: Dict[str, Any], subresource: str) -> Dict[str, Any]:
        updated = copy.deepcopy(candidate)
        updated["apiVersion"], updated["kind"] = "v1", "Node"
        if subresource == "status":
            updated["spec"] = copy.deepcopy(current.get("spec") or {})
        else:
            updated["status"] = copy.deepcopy(current.get("status") or {})
        meta = updated.setdefault("metadata", {})
        for key in ("name", "uid", "creationTimestamp", "resourceVersion"):
            meta[key] = current["metadata"].get(key)
        if not isinstance(updated.get("spec"), dict):
            updated["spec"] = {}
        return updated

    def patch_node(self, name: str, body: Any, content_type: str, subresource: str, dry_run: bool) -> Dict[str, Any]:
        with self.lock:
            current = self.get_node(name)
            patched = apply_patch(current, body, content_type)
            return self.write_node(name, patched, subresource, require_version=False, dry_run=dry_run)

    def expire_silent_nodes(self, now: float) -> List[str]:
        """Ready=Unknown for nodes whose kubelet stopped posting (node lifecycle controller)."""
        expired = []
        with self.lock:
            for name, node in self.nodes.items():
                age = heartbeat_age(node, now)
                if ready_status(node) != "Unknown" and age is not None and age > self.grace_seconds:
                    updated = copy.deepcopy(node)
                    unknown_conditions(updated, STOPPED_POSTING, now)
                    reconcile_node_taints(updated, now)
                    self._bump(updated)
                    self.nodes[name] = updated
                    expired.append(name)
            if expired:
                self.save()
        return expired

    # -- events, configmaps, leases

    def list_objects(self, plural: str, namespace: Optional[str], label_selector: str = "", field_selector: str = "") -> Dict[str, Any]:
        api_version, kind, supported = OBJECT_KINDS[plural]
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, supported)
        with self.lock:
            items = [
                _listed(obj) for _key, obj in sorted(self.objects[plural].items())
                if (namespace is None or obj["metadata"].get("namespace") == namespace)
                and labels_match(labels, obj["metadata"].get("labels")) and fields_match(fields, obj)
            ]
            return {"kind": kind + "List", "apiVersion": api_version, "metadata": {"resourceVersion": str(self.resource_version)}, "items": items}

    def get_object(self, plural: str, namespace: str, name: str) -> Dict[str, Any]:
        with self.lock:
            obj = self.objects[plural].get(_pod_key(namespace, name))
            if obj is None:
                raise not_found(plural, name)
            return copy.deepcopy(obj)

    def create_object(self, plural: str, namespace: str, body: Dict[str, Any], dry_run: bool = False) -> Dict[str, Any]:
        api_version, kind, _fields = OBJECT_KINDS[plural]
        meta = body.get("metadata") or {}
        name = (meta.get("name") or "").strip()
        if not name and meta.get("generateName"):
            name = meta["generateName"] + uuid.uuid4().hex[:5]
        if not name:
            raise invalid(kind, "", "metadata.name: Required value: name or generateName is required")
        with self.lock:
            key = _pod_key(namespace, name)
            if key in self.objects[plural]:
                raise ApiError(409, "AlreadyExists", '%s "%s" already exists' % (plural, name), {"name": name, "kind": plural})
            obj = copy.deepcopy(body)
            obj.update({"apiVersion": api_version, "kind": kind})
            obj["metadata"] = dict(meta, name=name, namespace=namespace)
            obj["metadata"].pop("resourceVersion", None)
            if dry_run:
                return obj
            self._admit_new(obj, time.time())
            self.objects[plural][key] = obj
            self._audit("create", kind, namespace, name, obj)
            self.save()
            return copy.deepcopy(obj)

    def replace_object(self, plural: str, namespace: str, name: str, body: Dict[str, Any], dry_run: bool = False) -> Dict[str, Any]:
        """PUT: a stale metadata.resourceVersion is a 409 (optimistic concurrency, as leader election relies on)."""
        api_version, kind, _fields = OBJECT_KINDS[plural]
        with self.lock:
            current = self.get_object(plural, namespace, name)
            wanted = str((body.get("metadata") or {}).get("resourceVersion") or "")
            if wanted and wanted != current["metadata"]["resourceVersion"]:
                raise conflict(plural, name)
            obj = copy.deepcopy(body)
            obj.update({"apiVersion": api_version, "kind": kind})
            obj["metadata"] = dict(obj.get("metadata") or {}, name=name, namespace=namespace)
            for key in ("uid", "creationTimestamp"):
                obj["metadata"][key] = current["metadata"].get(key)
            if dry_run:
                return obj
            self._bump(obj)
            self.objects[plural][_pod_key(namespace, name)] = obj
            self._audit("update", kind, namespace, name, obj)
            self.save()
            return copy.deepcopy(obj)

    def patch_object(self, plural: str, namespace: str, name: str, body: Any, content_type: str, dry_run: bool = False) -> Dict[str, Any]:
        with self.lock:
            current = self.get_object(plural, namespace, name)
            patched = apply_patch(current, body, content_type)
            return self.replace_object(plural, namespace, name, patched, dry_run)

    def delete_object(self, plural: str, namespace: str, name: str, dry_run: bool = False) -> Dict[str, Any]:
        with self.lock:
            obj = self.get_object(plural, namespace, name)
            if not dry_run:
                del self.objects[plural][_pod_key(namespace, name)]
                self.resource_version += 1
                self._audit("delete", obj["kind"], namespace, name, None)
                self.save()
            return obj

    # -- pods

    def list_pods(self, namespace: Optional[str], label_selector: str = "", field_selector: str = "") -> Dict[str, Any]:
        labels = parse_label_selector(label_selector)
        fields = parse_field_selector(field_selector, POD_FIELDS)
        with self.lock:
            items = [
                _listed(pod) for key, pod in sorted(self.pods.items())
                if (namespace is None or pod["metadata"].get("namespace") == namespace)
                and labels_match(labels, pod["metadata"].get("labels")) and fields_match(fields, pod)
            ]
            return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.resource_version)}, "items": items}

    def get_pod(self, namespace: str, name: str) -> Dict[str, Any]:
        with self.lock:
            pod = self.pods.get(_pod_key(namespace, name))
            if pod is None:
                raise not_found("pods", name)
            return copy.deepcopy(pod)

    def create_pod(self, namespace: str, body: Dict[str, Any], dry_run: bool = False) -> Dict[str, Any]:
        name = ((body.get("metadata") or {}).get("name") or "").strip()
        if not name:
            raise invalid("Pod", "", "metadata.name: Required value: name or generateName is required")
        with self.lock:
            if _pod_key(namespace, name) in self.pods:
                raise ApiError(409, "AlreadyExists", 'pods "%s" already exists' % name, {"name": name, "kind": "pods"})
            pod = copy.deepcopy(body)
            pod.update({"apiVersion": "v1", "kind": "Pod"})
            pod["metadata"]["namespace"] = namespace
            pod["metadata"].pop("resourceVersion", None)
            if dry_run:
                return pod
            self._admit_new(pod, time.time())
            self.pods[_pod_key(namespace, name)] = pod
            self.save()
            return copy.deepcopy(pod)

    def delete_pod(self, namespace: str, name: str, dry_run: bool = False) -> Dict[str, Any]:
        with self.lock:
            pod = self.get_pod(namespace, name)
            if not dry_run:
                del self.pods[_pod_key(namespace, name)]
                self.resource_version += 1
                self.save()
            return pod

    def mark_terminating(self, namespace: str, name: str) -> None:
        """Graceful deletion that never completes: the pod keeps a deletionTimestamp and stays listed."""
        pod = self.pods[_pod_key(namespace, name)]
        pod["metadata"].setdefault("deletionTimestamp", rfc3339(time.time()))
        self._bump(pod)
        self.save()

    def evict_pod(self, namespace: str, name: str, body: Any, dry_run: bool = False) -> Dict[str, Any]:
        if not isinstance(body, dict) or body.get("kind", "Eviction") != "Eviction":
            raise bad_request("the body must be an Eviction (policy/v1)")
        if (body.get("metadata") or {}).get("name", name) != name:
            raise bad_request("name in URL does not match name in Eviction object")
        with self.lock:
            pod = self.get_pod(namespace, name)
            annotations = pod["metadata"].get("annotations") or {}
            if annotations.get(EVICTION_BLOCKED_ANNOTATION) == "true":
                raise ApiError(
                    429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
                    {"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget sandbox-pdb needs 1 healthy pods and has 1 currently"}]},
                )
            if annotations.get(EVICTION_LINGERS_ANNOTATION) == "true":
                if not dry_run:
                    self.mark_terminating(namespace, name)
            else:
                self.delete_pod(namespace, name, dry_run)
        return status_object(201, "", "")

    def namespaces(self) -> Dict[str, Any]:
        with self.lock:
            names = sorted({"default", "kube-system"} | {pod["metadata"].get("namespace", "default") for pod in self.pods.values()})
        items = [{"metadata": {"name": name}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}} for name in names]
        return {"kind": "NamespaceList", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.resource_version)}, "items": items}


# --------------------------------------------------------------------------- discovery


def _resource(name: str, kind: str, namespaced: bool, verbs: List[str], short: Optional[List[str]] = None, **extra: Any) -> Dict[str, Any]:
    entry: Dict[str, Any] = {"name": name, "singularName": "" if "/" in name else kind.lower(), "namespaced": namespaced, "kind": kind, "verbs": verbs}
    if short:
        entry["shortNames"] = short
    entry.update(extra)
    return entry


CORE_V1_RESOURCES = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        _resource("namespaces", "Namespace", False, ["get", "list"], ["ns"]),
        _resource("nodes", "Node", False, ["create", "get", "list", "patch", "update"], ["no"]),
        _resource("nodes/status", "Node", False, ["get", "patch", "update"]),
        _resource("pods", "Pod", True, ["create", "delete", "get", "list"], ["po"], categories=["all"]),
        _resource("pods/eviction", "Eviction", True, ["create"], group="policy", version="v1"),
        _resource("events", "Event", True, ["create", "delete", "get", "list", "patch", "update"], ["ev"]),
        _resource("configmaps", "ConfigMap", True, ["create", "delete", "get", "list", "patch", "update"], ["cm"]),
    ],
}
COORDINATION_GROUP = {
    "name": "coordination.k8s.io",
    "versions": [{"groupVersion": "coordination.k8s.io/v1", "version": "v1"}],
    "preferredVersion": {"groupVersion": "coordination.k8s.io/v1", "version": "v1"},
}
COORDINATION_V1_RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "coordination.k8s.io/v1",
    "resources": [_resource("leases", "Lease", True, ["create", "delete", "get", "list", "patch", "update"])],
}
POLICY_GROUP = {
    "name": "policy",
    "versions": [{"groupVersion": "policy/v1", "version": "v1"}],
    "preferredVersion": {"groupVersion": "policy/v1", "version": "v1"},
}
POLICY_V1_RESOURCES = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "policy/v1",
    "resources": [_resource("poddisruptionbudgets", "PodDisruptionBudget", True, ["get", "list"], ["pdb"])],
}


def empty_list(kind: str, api_version: str, store: Store) -> Dict[str, Any]:
    return {"kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": str(store.resource_version)}, "items": []}


# --------------------------------------------------------------------------- control plane of the sandbox


class Control:
    """Outages, injected faults, the request log, and the stop signal."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.relisten = threading.Event()
        self.outage_until = 0.0
        self.outage_mode = ""
        self.faults: List[Dict[str, Any]] = []
        self.requests: List[Dict[str, Any]] = []

    def stop(self) -> None:
        self.stopping.set()
        self.relisten.set()

    def start_outage(self, seconds: float, mode: str) -> None:
        with self.lock:
            self.outage_until = time.time() + seconds
            self.outage_mode = mode
        if mode == "refuse":
            self.relisten.set()

    def end_outage(self) -> None:
        with self.lock:
            self.outage_until = 0.0
            self.outage_mode = ""

    def outage_left(self) -> float:
        with self.lock:
            return max(0.0, self.outage_until - time.time())

    def add_fault(self, fault: Dict[str, Any]) -> None:
        with self.lock:
            self.faults.append(fault)

    def take_fault(self, method: str, path: str) -> Optional[Dict[str, Any]]:
        with self.lock:
            for fault in self.faults:
                if fault.get("method", method).upper() == method and re.search(fault.get("path", ""), path) and fault.get("count", 1) > 0:
                    fault["count"] = fault.get("count", 1) - 1
                    return dict(fault)
        return None

    def record(self, entry: Dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(entry)
            del self.requests[:-REQUEST_LOG_SIZE]

    def state(self) -> Dict[str, Any]:
        with self.lock:
            return {"outage_seconds_left": max(0.0, self.outage_until - time.time()), "outage_mode": self.outage_mode, "faults": list(self.faults)}


# --------------------------------------------------------------------------- routing


Route = Tuple[str, "re.Pattern[str]", Callable[..., Any]]


def _query_flag(query: Dict[str, List[str]], name: str) -> str:
    return (query.get(name) or [""])[0]


class Api:
    """Maps (method, path) to the store; returns (code, body)."""

    def __init__(self, store: Store, control: Control) -> None:
        self.store = store
        self.control = control
        name = r"([a-z0-9]([-a-z0-9.]*[a-z0-9])?)"
        self.routes: List[Route] = [
            ("GET", re.compile(r"^/version/?$"), lambda m, q, b, h: KUBERNETES_VERSION),
            ("GET", re.compile(r"^/(healthz|livez|readyz)$"), lambda m, q, b, h: "ok"),
            ("GET", re.compile(r"^/api/?$"), self.core_versions),
            ("GET", re.compile(r"^/apis/?$"), lambda m, q, b, h: {"kind": "APIGroupList", "apiVersion": "v1", "groups": [POLICY_GROUP, COORDINATION_GROUP]}),
            ("GET", re.compile(r"^/apis/coordination\.k8s\.io/?$"), lambda m, q, b, h: dict(COORDINATION_GROUP, kind="APIGroup", apiVersion="v1")),
            ("GET", re.compile(r"^/apis/coordination\.k8s\.io/v1/?$"), lambda m, q, b, h: COORDINATION_V1_RESOURCES),
            ("GET", re.compile(r"^/api/v1/?$"), lambda m, q, b, h: CORE_V1_RESOURCES),
            ("GET", re.compile(r"^/apis/policy/?$"), lambda m, q, b, h: dict(POLICY_GROUP, kind="APIGroup", apiVersion="v1")),
            ("GET", re.compile(r"^/apis/policy/v1/?$"), lambda m, q, b, h: POLICY_V1_RESOURCES),
            ("GET", re.compile(r"^/apis/policy/v1/(namespaces/%s/)?poddisruptionbudgets$" % name),
             lambda m, q, b, h: empty_list("PodDisruptionBudgetList", "policy/v1", self.store)),
            ("GET", re.compile(r"^/api/v1/namespaces$"), lambda m, q, b, h: self.store.namespaces()),
            ("GET", re.compile(r"^/api/v1/nodes$"), self.list_nodes),
            ("POST", re.compile(r"^/api/v1/nodes$"), lambda m, q, b, h: (201, self.store.create_node(self._object(b), self._dry(q)))),
            ("GET", re.compile(r"^/api/v1/nodes/%s(/status)?$" % name), lambda m, q, b, h: self.store.get_node(m.group(1))),
            ("PUT", re.compile(r"^/api/v1/nodes/%s(/status)?$" % name), self.replace_node),
            ("PATCH", re.compile(r"^/api/v1/nodes/%s(/status)?$" % name), self.patch_node),
            ("GET", re.compile(r"^/api/v1/pods$"), lambda m, q, b, h: self._list_pods(None, q)),
            ("GET", re.compile(r"^/api/v1/namespaces/%s/pods$" % name), lambda m, q, b, h: self._list_pods(m.group(1), q)),
            ("POST", re.compile(r"^/api/v1/namespaces/%s/pods$" % name),
             lambda m, q, b, h: (201, self.store.create_pod(m.group(1), self._object(b), self._dry(q)))),
            ("GET", re.compile(r"^/api/v1/namespaces/%s/pods/%s$" % (name, name)), lambda m, q, b, h: self.store.get_pod(m.group(1), m.group(3))),
            ("DELETE", re.compile(r"^/api/v1/namespaces/%s/pods/%s$" % (name, name)),
             lambda m, q, b, h: self.store.delete_pod(m.group(1), m.group(3), self._dry(q))),
            ("POST", re.compile(r"^/api/v1/namespaces/%s/pods/%s/eviction$" % (name, name)),
             lambda m, q, b, h: (201, self.store.evict_pod(m.group(1), m.group(3), b, self._dry(q)))),
        ]
        for prefix, plural in (("/api/v1", "events"), ("/api/v1", "configmaps"), ("/apis/coordination\\.k8s\\.io/v1", "leases")):
            self.routes += self._object_routes(prefix, plural, name)

    def _object_routes(self, prefix: str, plural: str, name: str) -> List[Route]:
        store, one = self.store, r"^%s/namespaces/%s/%s/%s$" % (prefix, name, plural, name)
        return [
            ("GET", re.compile(r"^%s/%s$" % (prefix, plural)), lambda m, q, b, h: store.list_objects(
                plural, None, _query_flag(q, "labelSelector"), _query_flag(q, "fieldSelector"))),
            ("GET", re.compile(r"^%s/namespaces/%s/%s$" % (prefix, name, plural)), lambda m, q, b, h: store.list_objects(
                plural, m.group(1), _query_flag(q, "labelSelector"), _query_flag(q, "fieldSelector"))),
            ("POST", re.compile(r"^%s/namespaces/%s/%s$" % (prefix, name, plural)),
             lambda m, q, b, h: (201, store.create_object(plural, m.group(1), self._object(b), self._dry(q)))),
            ("GET", re.compile(one), lambda m, q, b, h: store.get_object(plural, m.group(1), m.group(3))),
            ("PUT", re.compile(one), lambda m, q, b, h: store.replace_object(plural, m.group(1), m.group(3), self._object(b), self._dry(q))),
            ("PATCH", re.compile(one), lambda m, q, b, h: store.patch_object(
                plural, m.group(1), m.group(3), b, h.get("Content-Type") or "", self._dry(q))),
            ("DELETE", re.compile(one), lambda m, q, b, h: store.delete_object(plural, m.group(1), m.group(3), self._dry(q))),
        ]

    @staticmethod
    def _dry(query: Dict[str, List[str]]) -> bool:
        return _query_flag(query, "dryRun") == "All"

    @staticmethod
    def _object(body: Any) -> Dict[str, Any]:
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        return body

    def core_versions(self, match: Any, query: Any, body: Any, headers: Any) -> Dict[str, Any]:
        host = headers.get("Host") or HOST
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}

    def list_nodes(self, match: Any, query: Dict[str, List[str]], body: Any, headers: Any) -> Dict[str, Any]:
        if _query_flag(query, "watch") in ("true", "1"):
            raise ApiError(405, "MethodNotAllowed", "watch is not supported by the sandbox API server")
        return self.store.list_nodes(_query_flag(query, "labelSelector"), _query_flag(query, "fieldSelector"))

    def _list_pods(self, namespace: Optional[str], query: Dict[str, List[str]]) -> Dict[str, Any]:
        if _query_flag(query, "watch") in ("true", "1"):
            raise ApiError(405, "MethodNotAllowed", "watch is not supported by the sandbox API server")
        return self.store.list_pods(namespace, _query_flag(query, "labelSelector"), _query_flag(query, "fieldSelector"))

    def replace_node(self, match: Any, query: Dict[str, List[str]], body: Any, headers: Any) -> Dict[str, Any]:
        candidate = self._object(body)
        name = match.group(1)
        if (candidate.get("metadata") or {}).get("name") not in (None, name):
            raise bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (candidate["metadata"]["name"], name))
        subresource = "status" if match.group(3) else ""
        return self.store.write_node(name, candidate, subresource, require_version=True, dry_run=self._dry(query))

    def patch_node(self, match: Any, query: Dict[str, List[str]], body: Any, headers: Dict[str, str]) -> Dict[str, Any]:
        subresource = "status" if match.group(3) else ""
        content_type = headers.get("Content-Type") or ""
        return self.store.patch_node(match.group(1), body, content_type, subresource, self._dry(query))

    def handle(self, method: str, path: str, query: Dict[str, List[str]], body: Any, headers: Dict[str, str]) -> Tuple[int, Any]:
        matched_path = False
        for route_method, pattern, handler in self.routes:
            match = pattern.match(path)
            if not match:
                continue
            matched_path = True
            if route_method != method:
                continue
            result = handler(match, query, body, headers)
            return result if isinstance(result, tuple) else (200, result)
        if matched_path:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        raise ApiError(404, "NotFound", "the server could not find the requested resource")


# --------------------------------------------------------------------------- HTTP


PUBLIC_PATHS = re.compile(r"^/(version|healthz|livez|readyz)/?$")


class Handler(BaseHTTPRequestHandler):
    server_version = "nodeops-sandbox-apiserver/1.0"
    protocol_version = "HTTP/1.0"  # one request per connection: a "refuse" outage really refuses

    def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
        return  # the request log is kept in memory (GET /_sandbox/requests)

    def _send(self, code: int, body: Any, content_type: str = "application/json") -> None:
        payload = body.encode("utf-8") if isinstance(body, str) and content_type.startswith("text/") else json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_error(self, error: ApiError) -> None:
        self._send(error.code, status_object(error.code, error.reason, error.message, error.details))

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            raise ApiError(413, "RequestEntityTooLarge", "the request body is too large")
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError as error:
            raise bad_request("the request body is not JSON: %s" % error)

    def _authorized(self) -> bool:
        token = self.server.token  # type: ignore[attr-defined]
        return not token or self.headers.get("Authorization", "") == "Bearer " + token

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        control: Control = self.server.control  # type: ignore[attr-defined]
        code = 500
        try:
            body = self._read_body() if method in ("POST", "PUT", "PATCH", "DELETE") else None
            if path.startswith("/_sandbox/"):
                code, result = self._sandbox(method, path, body)
                self._send(code, result)
                return
            left = control.outage_left()
            if left > 0:
                raise ApiError(503, "ServiceUnavailable", "the sandbox API server is in an injected outage (%.1f s left)" % left)
            fault = control.take_fault(method, path)
            if fault:
                raise ApiError(int(fault.get("code", 500)), fault.get("reason", "InternalError"), fault.get("message", "injected fault"))
            if not PUBLIC_PATHS.match(path) and not self._authorized():
                raise ApiError(401, "Unauthorized", "Unauthorized")
            api: Api = self.server.api  # type: ignore[attr-defined]
            code, result = api.handle(method, path, query, body, dict(self.headers.items()))
            if isinstance(result, str):
                self._send(code, result, "text/plain; charset=utf-8")
            else:
                self._send(code, result)
        except ApiError as error:
            code = error.code
            self._send_error(error)
        except (ValueError, KeyError, TypeError) as error:
            code = 500
            self._send_error(ApiError(500, "InternalError", "sandbox API server error: %s" % error))
        finally:
            control.record({
                "time": time.time(), "method": method, "path": path, "query": parts.query, "code": code,
                "content_type": self.headers.get("Content-Type", ""),
            })

    def _sandbox(self, method: str, path: str, body: Any) -> Tuple[int, Any]:
        control: Control = self.server.control  # type: ignore[attr-defined]
        store: Store = self.server.api.store  # type: ignore[attr-defined]
        if method == "GET" and path == "/_sandbox/state":
            return 200, dict(store.snapshot(), control=control.state())
        if method == "GET" and path == "/_sandbox/audit":
            with store.lock:
                return 200, {"audit": list(store.audit)}
        if method == "GET" and path == "/_sandbox/requests":
            with control.lock:
                return 200, {"requests": list(control.requests)}
        if method == "POST" and path == "/_sandbox/outage":
            body = body if isinstance(body, dict) else {}
            seconds = float(body.get("seconds", 10))
            mode = str(body.get("mode", "unavailable"))
            if mode not in ("unavailable", "refuse") or seconds <= 0:
                raise bad_request('outage needs "seconds" > 0 and "mode" unavailable|refuse')
            control.start_outage(seconds, mode)
            return 202, {"outage_seconds": seconds, "mode": mode}
        if method == "DELETE" and path == "/_sandbox/outage":
            control.end_outage()
            return 200, {"outage_seconds": 0}
        if method == "POST" and path == "/_sandbox/faults":
            if not isinstance(body, dict) or "path" not in body:
                raise bad_request('a fault needs at least "path" (a regular expression)')
            control.add_fault(dict(body, count=int(body.get("count", 1))))
            return 201, control.state()
        if method == "DELETE" and path == "/_sandbox/faults":
            with control.lock:
                control.faults.clear()
            return 200, control.state()
        raise ApiError(404, "NotFound", "unknown sandbox control %s %s" % (method, path))

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")


class SandboxHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_server(port: int, api: Api, control: Control, token: str) -> SandboxHTTPServer:
    server = SandboxHTTPServer((HOST, port), Handler)
    server.api = api  # type: ignore[attr-defined]
    server.control = control  # type: ignore[attr-defined]
    server.token = token  # type: ignore[attr-defined]
    return server


# --------------------------------------------------------------------------- lifetime


def write_atomically(path: str, text: str) -> None:
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)


def watchdog_reason(exit_if_missing: List[str], deadline: float, now: float) -> Optional[str]:
    """Why a sandbox process must stop by itself: its fleet directory is gone or it lived too long."""
    for path in exit_if_missing:
        if not os.path.exists(path):
            return "%s disappeared" % path
    if now >= deadline:
        return "maximum lifetime reached"
    return None


def background_loop(store: Store, control: Control, exit_if_missing: List[str], deadline: float) -> None:
    while not control.stopping.wait(1.0):
        reason = watchdog_reason(exit_if_missing, deadline, time.time())
        if reason:
            sys.stderr.write("apiserver: stopping: %s\n" % reason)
            control.stop()
            return
        store.expire_silent_nodes(time.time())


def serve(options: argparse.Namespace) -> int:
    store = Store(options.state, options.node_monitor_grace_period)
    store.save()
    control = Control()
    api = Api(store, control)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_args: control.stop())
    deadline = time.time() + options.max_lifetime
    threading.Thread(target=background_loop, args=(store, control, options.exit_if_missing, deadline), daemon=True).start()
    port = options.port
    try:
        while not control.stopping.is_set():
            server = make_server(port, api, control, options.token)
            if port == 0:
                port = server.server_address[1]
                write_atomically(options.port_file, "%d\n" % port)
                sys.stderr.write("apiserver: listening on http://%s:%d\n" % (HOST, port))
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
            thread.start()
            while not control.relisten.wait(0.2):
                pass
            control.relisten.clear()
            server.shutdown()
            server.server_close()
            thread.join()
            while not control.stopping.is_set() and control.outage_left() > 0:
                control.stopping.wait(min(0.2, control.outage_left()))
            control.end_outage()
    finally:
        if os.path.exists(options.port_file):
            os.unlink(options.port_file)
    return 0


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Kubernetes API server stand-in for the nodeops.numa_drift sandbox (127.0.0.1 only).")
    parser.add_argument("--state", required=True, help="JSON state file, read at start if present and rewritten on every write")
    parser.add_argument("--port-file", required=True, help="file that receives the bound port")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    parser.add_argument("--token", default="", help="require this bearer token (default: accept any request)")
    parser.add_argument("--node-monitor-grace-period", type=float, default=DEFAULT_GRACE_SECONDS,
                        help="seconds without a kubelet post before Ready turns Unknown")
    parser.add_argument("--exit-if-missing", action="append", default=[], metavar="PATH", help="stop when PATH disappears")
    parser.add_argument("--max-lifetime", type=float, default=DEFAULT_MAX_LIFETIME, help="stop after this many seconds")
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    return serve(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
