# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet stand-in: kubelet's memory manager start-up (Static policy), node status, admission.

Stdlib and the collection's ``plugins/module_utils`` only, Python >= 3.9: it also runs inside
test VMs under real systemd, from a copied file set (this file next to an
``ansible_collections/nodeops/numa_drift/plugins/module_utils`` tree, or with
``NUMA_DRIFT_COLLECTIONS_PATH`` naming the directory that holds ``ansible_collections``).

What ``run`` (the default command) does, in kubelet's order (spec sections 1, 3.5, 5):

1. loads the KubeletConfiguration and flags from the node (``--root`` prefix), reads NUMA
   memory from sysfs, and makes the memory manager's construction checks (policy, reservedMemory
   against Node Allocatable); a failure exits 1 with ``failed to run Kubelet: <error>``;
2. restores ``<root-dir>/memory_manager_state`` as kubelet of ``--era`` does (decode, checksum,
   policy name); a failure exits 1 with ``could not restore state from checkpoint: <error>,
   please drain this node and delete the memory manager checkpoint file "<path>" before
   restarting Kubelet``; a missing file, or one with an empty machine state and no entries, is
   replaced by the default machine state written in the era's layout, as kubelet does;
3. validates the restored state (replay of every block, then kubelet's comparison); a failure
   exits 1 with ``start memory manager error: [memorymanager] ...``;
4. posts the Node's status (Ready=True) to ``--api`` (registering the Node when it does not
   exist), then heartbeats every ``--heartbeat`` seconds until SIGTERM, on which it exits 0
   without touching the checkpoint. On a start failure it posts Ready=False with the error as the
   condition message before exiting, so the API shows why the node is NotReady.

``check`` makes steps 1-3 without writing or posting anything (exit 0 when kubelet would start).
``admit`` places a Guaranteed pod's memory like kubelet's static policy with the default hint
(topology manager policy ``none``): the smallest NUMA node group with enough free memory for every
requested resource, single nodes first, lowest ids first; it refuses while a stand-in runs on the
node, and rewrites the checkpoint in the era's layout.

Usage::

    python kubelet_standin.py [run] --root DIR [--era legacy|1.37] [--api URL --node-name NAME]
        [--token T] [--node-ip IP] [--heartbeat 5] [--fault-file PATH] [--exit-if-missing PATH]
        [--max-lifetime SECONDS] [--kubelet-root-dir P] [--config P] [--state-comparison group|per-node]
    python kubelet_standin.py check --root DIR [--era ...]
    python kubelet_standin.py admit --root DIR --pod UID --container NAME --memory 2Gi
        [--hugepages hugepages-1Gi=2Gi]... [--era ...]

Fault injection (tests): ``--fault-file`` names a JSON file read at start;
``{"mode": "crash", "message": "..."}`` makes a start that passed the memory manager fail anyway
(exit 1, Ready=False with the message); ``{"mode": "not-ready", "message": "..."}`` keeps running
but reports Ready=False.
"""

from __future__ import annotations

import argparse
import copy
import fcntl
import hashlib
import importlib
import itertools
import json
import os
import random
import signal
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

COLLECTION_MODULE = "ansible_collections.nodeops.numa_drift.plugins.module_utils"
COLLECTION_DIR = os.path.join("ansible_collections", "nodeops", "numa_drift")


def _has_collection(base: str) -> bool:
    return os.path.isdir(os.path.join(base, COLLECTION_DIR, "plugins", "module_utils"))


def _checkout_of_this_file() -> Optional[str]:
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(checkout, "galaxy.yml")) and os.path.isdir(os.path.join(checkout, "plugins", "module_utils")):
        return checkout
    return None


def _link_tree_for(checkout: str) -> str:
    """``<tmp>/nodeops-numa-drift-<hash>/ansible_collections/nodeops/numa_drift -> checkout`` (as conftest.py)."""
    key = hashlib.sha256(checkout.encode()).hexdigest()[:12]
    base = os.path.join(tempfile.gettempdir(), "nodeops-numa-drift-%s" % key)
    link = os.path.join(base, COLLECTION_DIR)
    if os.path.realpath(link) != checkout:
        os.makedirs(os.path.dirname(link), exist_ok=True)
        temporary = "%s.%d" % (link, os.getpid())
        os.symlink(checkout, temporary)
        os.replace(temporary, link)
    return base


def collection_search_path() -> Optional[str]:
    """The directory holding ``ansible_collections/nodeops/numa_drift`` for this stand-in."""
    here = os.path.dirname(os.path.abspath(__file__))
    for base in (os.environ.get("NUMA_DRIFT_COLLECTIONS_PATH", ""), here):
        if base and _has_collection(base):
            return base
    checkout = _checkout_of_this_file()
    if checkout is None:
        return None
    parts = checkout.split(os.sep)
    if parts[-3:] == ["ansible_collections", "nodeops", "numa_drift"]:
        return os.sep.join(parts[:-3]) or os.sep
    return _link_tree_for(checkout)


def ensure_collection_importable() -> None:
    try:
        importlib.import_module(COLLECTION_MODULE + "._checkpoint")
        return
    except ImportError:
        pass
    base = collection_search_path()
    if base is None:
        raise SystemExit("kubelet stand-in: cannot find %s; set NUMA_DRIFT_COLLECTIONS_PATH" % COLLECTION_DIR)
    sys.path.insert(0, base)
    importlib.invalidate_caches()


ensure_collection_importable()

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.eras import read_as_era  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_legacy, marshal_v3  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (  # noqa: E402
    Block,
    CHECKPOINT_FILE_NAME,
    CheckpointFields,
    DATA_KEYS,
    LEGACY_KEYS,
    NodeMap,
    V2_KEYS,
    V3_KEYS,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import GoJsonError, parse_document  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.launch import KubeletLaunch  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import KubeletSettings  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.allocatable import node_allocatable_reservation  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.checks import node_allocatable_errors  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.machine_state import (  # noqa: E402
    NodeMemory,
    compare_states,
    default_machine_state,
    replay_blocks,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.model import NodeFacts  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.sysfs import read_node_facts  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError, parse_quantity  # noqa: E402
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import replace  # noqa: E402

ERA_CHOICES = ("legacy", "1.37")
# The release each era's node runs: its program says it (fleet.write_node_tree puts it where the node's unit runs
# kubelet), the stand-in posts it as the Node's kubeletVersion, as the guests' real kubelets (tests/vm/kubelet_disk.py).
KUBELET_VERSIONS = {"legacy": "v1.34.4", "1.37": "v1.37.2"}
VALIDATED_POLICIES = ("Static", "BestEffort")
EXPECTED_STATE_DIFFERS = "[memorymanager] the expected machine state is different from the real one"
EMPTY_STATE_WITH_ASSIGNMENTS = "[memorymanager] machine state can not be empty when it has memory assignments"
RESTORE_ERROR = (
    'could not restore state from checkpoint: %s, please drain this node and delete the memory manager checkpoint file "%s" '
    "before restarting Kubelet"
)
LOCK_NAME = ".kubelet-standin.lock"
BOOT_ID = str(uuid.uuid4())  # one per stand-in process, like a boot
DEFAULT_HEARTBEAT = 5.0
API_TIMEOUT = 3.0


def log(message: str) -> None:
    """klog-like line on stderr (the journal of the stand-in)."""
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime())
    sys.stderr.write("I%s.%06d %7d kubelet_standin] %s\n" % (stamp, int(time.time() % 1 * 1e6), os.getpid(), message))
    sys.stderr.flush()


# --------------------------------------------------------------------------- the node as kubelet sees it


@dataclass(frozen=True)
class Node:
    root: str
    settings: KubeletSettings
    facts: NodeFacts
    machine: Dict[int, NodeMemory]
    checkpoint_path: str


def machine_of(facts: NodeFacts) -> Dict[int, NodeMemory]:
    """cadvisor's per-NUMA numbers: MemTotal and every hugepage pool (spec 6.4)."""
    return {
        numa.id: NodeMemory(numa.mem_total_bytes or 0, {pool.resource_name: pool.total_bytes or 0 for pool in numa.hugepages})
        for numa in facts.numa_nodes
    }


def load_node(root: str, kubelet_root_dir: Optional[str], config: Optional[str], kubelet_args: Sequence[str] = ()) -> Node:
    """The node as kubelet sees it: with ``kubelet_args``, exactly as a kubelet given that argv
    (``--config``, ``--config-dir``, flags; nothing discovered), else the node's kubeadm layout."""
    if kubelet_args:
        launch = KubeletLaunch("kubelet", None, tuple(Arg(arg, "kubelet's command line") for arg in kubelet_args))
        settings = load_kubelet_settings(HostFiles(root), launch=launch)
    else:
        settings = load_kubelet_settings(HostFiles(root), kubelet_root_dir=kubelet_root_dir, config_path=config)
    facts = read_node_facts(HostFiles(root))
    path = os.path.join(root, settings.root_dir.lstrip("/"), CHECKPOINT_FILE_NAME)
    return Node(root, settings, facts, machine_of(facts), path)


def construction_errors(node: Node) -> List[str]:
    """Kubelet's config and memory manager construction checks (spec 5.5)."""
    errors = list(node.settings.config_problems) + list(node.settings.problems)
    if not node.facts.numa_nodes:
        errors.append("failed to get NUMA topology: no NUMA node under %s" % os.path.join(node.root, "sys/devices/system/node"))
    capacity = node.facts.machine_mem_total_bytes or sum(memory.mem_total_bytes for memory in node.machine.values())
    hugepages = sorted({name for memory in node.machine.values() for name in memory.hugepage_totals})
    return errors + node_allocatable_errors(node.settings, node.facts.node_ids(), capacity, hugepages)


# --------------------------------------------------------------------------- restore (spec 3.5)


def restored_fields(tree: Any, via: Optional[str]) -> CheckpointFields:
    """What the era's reader loaded: the V3 data section, the V2 struct, or the legacy struct."""
    if via == "v3":
        data, _error = decode_fields(tree, V3_KEYS)
        return decode_fields(parse_document(data.data.encode("utf-8")), DATA_KEYS)[0]
    if via == "v2":
        return decode_fields(tree, V2_KEYS)[0]
    return decode_fields(tree, LEGACY_KEYS)[0]


def read_checkpoint_as_era(raw: bytes, era: str) -> Tuple[Optional[CheckpointFields], Optional[str]]:
    """(content, None) when the era's reader loads ``raw``; (None, kubelet's error) otherwise."""
    try:
        tree = parse_document(raw)
    except GoJsonError as error:
        return None, str(error)
    result = read_as_era(tree, era)
    if not result.accepted:
        return None, result.error
    return restored_fields(tree, result.via), None


def restore_error(error: str, path: str) -> str:
    return RESTORE_ERROR % (error, path)


def policy_error(configured: str, recorded: str) -> Optional[str]:
    if configured == recorded:
        return None
    return '[memorymanager] configured policy "%s" differs from state checkpoint policy "%s"' % (configured, recorded)


# --------------------------------------------------------------------------- validateState (spec 5.2, 5.3)


def validate_state(content: CheckpointFields, node: Node, per_node: bool) -> Tuple[Optional[str], bool]:
    """(error, write_default): kubelet's ``validateState`` for the Static policy."""
    stored = content.machine_state or {}
    if not stored:
        if content.entries:
            return EMPTY_STATE_WITH_ASSIGNMENTS, False
        return None, True
    expected = default_machine_state(node.machine, node.settings.reserved_memory)
    fatal = [issue for issue in replay_blocks(expected, content.entries) if issue.kind != "does_not_fit"]
    if fatal:
        return fatal[0].message, False
    if compare_states(stored, expected, strict=per_node):
        return EXPECTED_STATE_DIFFERS, False
    return None, False


# --------------------------------------------------------------------------- writing like kubelet (spec 1)


def marshal_for_era(fields: CheckpointFields, era: str) -> bytes:
    return marshal_v3(fields) if era == "1.37" else marshal_legacy(fields)


def write_like_kubelet(path: str, content: bytes) -> None:
    """Temp file ``.<digits>`` in the same directory (0600), fsync, rename over the checkpoint."""
    directory = os.path.dirname(path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    while True:
        temporary = os.path.join(directory, ".%d" % random.randint(10 ** 8, 10 ** 10))
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            break
        except FileExistsError:
            continue
    try:
        os.write(handle, content)
        os.fsync(handle)
    finally:
        os.close(handle)
    os.rename(temporary, path)


def default_checkpoint(node: Node) -> CheckpointFields:
    return CheckpointFields(
        policy_name=node.settings.policy, machine_state=default_machine_state(node.machine, node.settings.reserved_memory), entries={}
    )


# --------------------------------------------------------------------------- start-up


@dataclass(frozen=True)
class StartResult:
    error: Optional[str]  # kubelet's fatal error line, None when the memory manager started
    fresh: bool = False  # the default machine state replaces a missing or empty checkpoint
    content: Optional[CheckpointFields] = None


def start_memory_manager(node: Node, era: str, per_node: bool, write: bool) -> StartResult:
    errors = construction_errors(node)
    if errors:
        return StartResult("failed to run Kubelet: %s" % errors[0])
    raw = read_file(node.checkpoint_path)
    if raw is None:
        log("checkpoint is not found: %s" % node.checkpoint_path)
        return _write_default(node, era, write)
    content, error = read_checkpoint_as_era(raw, era)
    if content is None:
        return StartResult(restore_error(error or "checkpoint is corrupted", node.checkpoint_path))
    mismatch = policy_error(node.settings.policy, content.policy_name)
    if mismatch:
        return StartResult(restore_error(mismatch, node.checkpoint_path))
    log("State checkpoint: restored state from checkpoint")
    if node.settings.policy not in VALIDATED_POLICIES:
        return StartResult(None, content=content)
    error, needs_default = validate_state(content, node, per_node)
    if error:
        return StartResult("start memory manager error: %s" % error)
    if needs_default:
        return _write_default(node, era, write)
    return StartResult(None, content=content)


def _write_default(node: Node, era: str, write: bool) -> StartResult:
    fields = default_checkpoint(node)
    if write:
        log("writing the default machine state to %s" % node.checkpoint_path)
        write_like_kubelet(node.checkpoint_path, marshal_for_era(fields, era))
    return StartResult(None, fresh=True, content=fields)


def read_file(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------- API client (node status)


def api_request(api: str, token: str, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(api.rstrip("/") + path, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=API_TIMEOUT) as response:
            return response.status, json.loads(response.read().decode("utf-8") or "null")
    except urllib.error.HTTPError as error:
        return error.code, None


def rfc3339(timestamp: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def kib(num_bytes: int) -> str:
    return "%dKi" % (num_bytes // 1024)


def capacity_of(node: Node) -> Tuple[Dict[str, str], Dict[str, str]]:
    """Node capacity and allocatable as kubelet reports them (memory, hugepages, cpu, pods)."""
    memory = node.facts.machine_mem_total_bytes or sum(m.mem_total_bytes for m in node.machine.values())
    hugepages: Dict[str, int] = {}
    for numa in node.machine.values():
        for name, total in numa.hugepage_totals.items():
            hugepages[name] = hugepages.get(name, 0) + total
    reservation, _problems = node_allocatable_reservation(node.settings, memory, sorted(hugepages))
    cpus = max(1, 2 * len(node.machine))
    capacity = {"cpu": str(cpus), "memory": kib(memory), "pods": "110"}
    capacity.update({name: kib(total) for name, total in sorted(hugepages.items())})
    allocatable = dict(capacity)
    allocatable["memory"] = kib(max(0, memory - sum(hugepages.values()) - int(reservation.get("memory", 0))))
    allocatable.update({name: kib(max(0, total - int(reservation.get(name, 0)))) for name, total in sorted(hugepages.items())})
    return capacity, allocatable


def conditions(ready: bool, message: str, previous: Sequence[Dict[str, Any]], now: float) -> List[Dict[str, Any]]:
    """Kubelet's four node conditions; lastTransitionTime kept while a status does not change."""
    before = {item.get("type"): item for item in previous if isinstance(item, dict)}
    wanted = [
        ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        ("Ready", "True" if ready else "False", "KubeletReady" if ready else "KubeletNotReady", message),
    ]
    result = []
    for kind, status, reason, text in wanted:
        old = before.get(kind) or {}
        transition = old.get("lastTransitionTime") if old.get("status") == status else None
        result.append({
            "type": kind, "status": status, "reason": reason, "message": text,
            "lastHeartbeatTime": rfc3339(now), "lastTransitionTime": transition or rfc3339(now),
        })
    return result


def node_info(name: str, era: str) -> Dict[str, str]:
    """``status.nodeInfo`` with every field the API's schema requires."""
    release = os.uname().release
    machine_id = uuid.uuid5(uuid.NAMESPACE_DNS, name)
    return {
        "machineID": machine_id.hex, "systemUUID": str(machine_id),
        "bootID": BOOT_ID, "kernelVersion": release, "osImage": "sandbox", "containerRuntimeVersion": "containerd://1.7.24",
        "kubeletVersion": KUBELET_VERSIONS[era], "kubeProxyVersion": KUBELET_VERSIONS[era], "operatingSystem": "linux", "architecture": "amd64",
    }


class StatusReporter:
    """Registers the Node and patches its status, like kubelet's node status loop."""

    def __init__(self, api: str, token: str, name: str, node_ip: str, era: str, node: Optional[Node]) -> None:
        self.api, self.token, self.name, self.node_ip, self.era, self.node = api, token, name, node_ip, era, node
        self.previous: List[Dict[str, Any]] = []

    def _registration(self) -> Dict[str, Any]:
        capacity, allocatable = capacity_of(self.node) if self.node else ({}, {})
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.name, "labels": {"kubernetes.io/hostname": self.name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
            "spec": {},
            "status": {"capacity": capacity, "allocatable": allocatable,
                       "addresses": [{"type": "InternalIP", "address": self.node_ip}, {"type": "Hostname", "address": self.name}]},
        }

    def _fetch_or_register(self) -> bool:
        code, body = api_request(self.api, self.token, "GET", "/api/v1/nodes/" + self.name)
        if code == 404:
            code, body = api_request(self.api, self.token, "POST", "/api/v1/nodes", self._registration())
            log("registering node %s: HTTP %d" % (self.name, code))
        if code in (200, 201) and isinstance(body, dict):
            self.previous = list((body.get("status") or {}).get("conditions") or [])
            return True
        return False

    def post(self, ready: bool, message: str) -> bool:
        """Patch nodes/<name>/status; False when the API cannot be reached (kubelet retries later)."""
        try:
            if not self.previous and not self._fetch_or_register():
                return False
            now = time.time()
            status: Dict[str, Any] = {"conditions": conditions(ready, message, self.previous, now)}
            if self.node is not None:
                status["capacity"], status["allocatable"] = capacity_of(self.node)
                status["nodeInfo"] = node_info(self.name, self.era)
            code, _body = api_request(
                self.api, self.token, "PATCH", "/api/v1/nodes/%s/status" % self.name, {"status": status}, "application/strategic-merge-patch+json"
            )
        except (OSError, ValueError) as error:
            log("Error updating node status, will retry: %s" % error)
            return False
        if code != 200:
            log("Error updating node status, will retry: HTTP %d" % code)
            return False
        self.previous = status["conditions"]
        return True


# --------------------------------------------------------------------------- run


class Stop:
    """SIGTERM/SIGINT flag."""

    def __init__(self) -> None:
        self.requested = False
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, _frame: Any) -> None:
        self.requested = True


def watchdog_reason(exit_if_missing: Sequence[str], deadline: float) -> Optional[str]:
    for path in exit_if_missing:
        if not os.path.exists(path):
            return "%s disappeared" % path
    if time.time() >= deadline:
        return "maximum lifetime reached"
    return None


def read_fault(path: Optional[str]) -> Dict[str, Any]:
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            fault = json.load(handle)
    except FileNotFoundError:
        return {}
    except ValueError as error:
        log("ignoring unreadable fault file %s: %s" % (path, error))
        return {}
    return fault if isinstance(fault, dict) else {}


def hold_node_lock(node: Node) -> Optional[Any]:
    """An exclusive flock beside the checkpoint while kubelet runs (``admit`` refuses while held)."""
    directory = os.path.dirname(node.checkpoint_path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    handle = open(os.path.join(directory, LOCK_NAME), "a+", encoding="utf-8")  # pylint: disable=consider-using-with
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def fail(message: str, reporter: Optional[StatusReporter]) -> int:
    """Kubelet's fatal exit: the error on stderr (last line, verbatim), Ready=False with it, exit 1."""
    sys.stderr.write("E%s %7d kubelet_standin] command failed\n" % (time.strftime("%m%d %H:%M:%S"), os.getpid()))
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
    if reporter is not None:
        reporter.post(False, message)
    return 1


def run(options: argparse.Namespace) -> int:
    stop = Stop()
    deadline = time.time() + options.max_lifetime
    node = load_node(options.root, options.kubelet_root_dir, options.config, options.kubelet_args)
    reporter = StatusReporter(options.api, options.token, options.node_name, options.node_ip, options.era, node) if options.api else None
    lock = hold_node_lock(node)
    if lock is None:
        return fail("another kubelet stand-in is running on %s" % options.root, None)
    result = start_memory_manager(node, options.era, options.state_comparison == "per-node", write=True)
    if result.error:
        return fail(result.error, reporter)
    fault = read_fault(options.fault_file)
    if fault.get("mode") == "crash":
        return fail(str(fault.get("message", "injected start failure")), reporter)
    ready = fault.get("mode") != "not-ready"
    message = "kubelet is posting ready status" if ready else str(fault.get("message", "container runtime network not ready"))
    log("Started kubelet (memory manager policy %s, era %s)" % (node.settings.policy, options.era))
    next_post = 0.0
    while not stop.requested:
        reason = watchdog_reason(options.exit_if_missing, deadline)
        if reason:
            log("stopping: %s" % reason)
            break
        if reporter is not None and time.time() >= next_post:
            reporter.post(ready, message)
            next_post = time.time() + options.heartbeat
        time.sleep(0.1)
    log("Shutting down kubelet")
    lock.close()
    return 0


def check(options: argparse.Namespace) -> int:
    node = load_node(options.root, options.kubelet_root_dir, options.config, options.kubelet_args)
    result = start_memory_manager(node, options.era, options.state_comparison == "per-node", write=False)
    if result.error:
        sys.stderr.write(result.error + "\n")
        return 1
    print("ok: the memory manager would start (%s)" % ("it would write the default machine state" if result.fresh else "checkpoint accepted"))
    return 0


# --------------------------------------------------------------------------- admission (static policy)


def node_groups(node_ids: Sequence[int]) -> Iterator[Tuple[int, ...]]:
    """NUMA masks in kubelet's order: by size, then lexicographic (bitmask.IterateBitMasks)."""
    for size in range(1, len(node_ids) + 1):
        yield from itertools.combinations(sorted(node_ids), size)


def group_usable(state: NodeMap, group: Tuple[int, ...]) -> bool:
    """Kubelet's rules: no single/cross NUMA mixing, one group per node (calculateHints)."""
    for node_id in group:
        cells = (state[node_id].cells or []) if state.get(node_id) else []
        assignments = state[node_id].number_of_assignments if state.get(node_id) else 0
        if len(group) == 1 and len(cells) > 1:
            return False
        if len(group) > 1 and assignments > 0 and (len(cells) == 1 or sorted(cells) != list(group)):
            return False
    return True


def group_sum(state: NodeMap, group: Tuple[int, ...], resource: str, attribute: str) -> int:
    total = 0
    for node_id in group:
        table = (state[node_id].memory_map or {}).get(resource)
        total += getattr(table, attribute) if table is not None else 0
    return total


def best_group(state: NodeMap, requests: Dict[str, int]) -> Optional[Tuple[int, ...]]:
    """The default hint of the static policy: the narrowest preferred group that fits."""
    fitting = []
    for group in node_groups(sorted(state)):
        if not group_usable(state, group):
            continue
        if any(group_sum(state, group, res, "allocatable") < size for res, size in requests.items()):
            continue
        if all(group_sum(state, group, res, "free") >= size for res, size in requests.items()):
            fitting.append(group)
    return min(fitting, key=lambda group: (len(group), group)) if fitting else None


def add_blocks(content: CheckpointFields, pod: str, container: str, group: Tuple[int, ...],
               requests: Dict[str, int]) -> CheckpointFields:
    """Kubelet's Allocate: one block per resource with the group as affinity, machine state updated."""
    blocks = [Block(list(group), resource, size) for resource, size in sorted(requests.items())]
    entries = dict(content.entries or {})
    containers = dict(entries.get(pod) or {})
    containers[container] = blocks
    entries[pod] = containers
    state = copy.deepcopy(content.machine_state or {})
    replay_blocks(state, {pod: {container: blocks}})
    return replace(content, machine_state=state, entries=entries)


def parse_requests(memory: str, hugepages: Sequence[str]) -> Dict[str, int]:
    requests = {"memory": parse_quantity(memory)}
    for item in hugepages:
        name, _sep, quantity = item.partition("=")
        if not name.startswith("hugepages-") or not quantity:
            raise QuantityError("--hugepages takes hugepages-<size>=<quantity>, got %r" % item)
        requests[name] = parse_quantity(quantity)
    return {name: size for name, size in requests.items() if size > 0}


def admit(options: argparse.Namespace) -> int:
    node = load_node(options.root, options.kubelet_root_dir, options.config, options.kubelet_args)
    lock = hold_node_lock(node)
    if lock is None:
        sys.stderr.write("admit: a kubelet stand-in is running on %s; stop it first\n" % options.root)
        return 2
    try:
        result = start_memory_manager(node, options.era, options.state_comparison == "per-node", write=True)
        if result.error or result.content is None:
            sys.stderr.write("admit: kubelet would not start, so it admits nothing: %s\n" % result.error)
            return 1
        requests = parse_requests(options.memory, options.hugepages)
        if options.pod in (result.content.entries or {}) and options.container in (result.content.entries[options.pod] or {}):
            sys.stderr.write("admit: %s/%s already has memory blocks\n" % (options.pod, options.container))
            return 1
        group = best_group(result.content.machine_state or {}, requests)
        if group is None:
            sys.stderr.write("admit: [memorymanager] failed to get the default NUMA affinity, no NUMA nodes with enough memory is available\n")
            return 1
        admitted = add_blocks(result.content, options.pod, options.container, group, requests)
        write_like_kubelet(node.checkpoint_path, marshal_for_era(admitted, options.era))
        print(json.dumps({"pod": options.pod, "container": options.container, "numa_affinity": list(group), "requests": requests}, sort_keys=True))
        return 0
    finally:
        lock.close()


# --------------------------------------------------------------------------- command line


def add_node_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default="/", help="the node's root (sysfs, procfs and kubelet files are read under it)")
    parser.add_argument("--kubelet-root-dir", default=None, help="kubelet --root-dir (default: from flags, else /var/lib/kubelet)")
    parser.add_argument("--config", default=None, help="KubeletConfiguration path on the node (default: <root-dir>/config.yaml)")
    parser.add_argument("--era", choices=ERA_CHOICES, default="legacy", help="which kubelet's checkpoint reader and writer to behave like")
    parser.add_argument("--state-comparison", choices=("group", "per-node"), default="group",
                        help="group: kubelet >= 1.32 (group sums of free/reserved); per-node: older kubelets")
    parser.add_argument("kubelet_args", nargs="*", metavar="-- KUBELET-ARG",
                        help="after --: kubelet's own command line (--config, --config-dir, --root-dir, flags), "
                        "read exactly as kubelet reads it; replaces --kubelet-root-dir and --config")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    argv = list(argv)
    command = argv.pop(0) if argv and argv[0] in ("run", "check", "admit") else "run"
    parser = argparse.ArgumentParser(prog="kubelet_standin.py %s" % command, description=__doc__.split("\n\n", maxsplit=1)[0])
    add_node_arguments(parser)
    if command == "run":
        parser.add_argument("--api", default="", help="API server URL; the node status is posted there")
        parser.add_argument("--node-name", default=os.uname().nodename, help="the Node's name in the API")
        parser.add_argument("--node-ip", default="127.0.0.1", help="InternalIP when the stand-in registers the Node")
        parser.add_argument("--token", default="", help="bearer token for the API")
        parser.add_argument("--heartbeat", type=float, default=DEFAULT_HEARTBEAT, help="seconds between node status posts")
        parser.add_argument("--fault-file", default=None, help="JSON fault injection file (see the module docstring)")
        parser.add_argument("--exit-if-missing", action="append", default=[], metavar="PATH", help="exit 0 when PATH disappears")
        parser.add_argument("--max-lifetime", type=float, default=float("inf"), help="exit 0 after this many seconds")
    elif command == "admit":
        parser.add_argument("--pod", required=True, help="pod UID")
        parser.add_argument("--container", required=True, help="container name")
        parser.add_argument("--memory", required=True, help="memory request = limit, e.g. 2Gi")
        parser.add_argument("--hugepages", action="append", default=[], metavar="hugepages-<size>=<qty>", help="hugepage request = limit")
    options = parser.parse_args(argv)
    options.command = command
    return options


def main(argv: Optional[Sequence[str]] = None) -> int:
    options = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if options.command == "check":
            return check(options)
        if options.command == "admit":
            return admit(options)
        return run(options)
    except QuantityError as error:
        sys.stderr.write("%s\n" % error)
        return 2


if __name__ == "__main__":
    sys.exit(main())
