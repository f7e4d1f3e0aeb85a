# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""CPU topology and ``cpu_manager_state`` for fake node trees (the CPU manager's cases).

``add_cpu_topology(root, cpus, online)`` writes what cAdvisor reads of a machine's CPUs on top of
a tree made by ``nodetree.build_node_tree``: per CPU ``/sys/devices/system/cpu/cpuN/topology``
(``core_id``, ``physical_package_id``, ``thread_siblings_list``, ``core_siblings_list``), the
NUMA node's ``cpuN`` link (``../../cpu/cpuN``, as on a real node) and its ``cpulist`` (online CPUs
only), and ``/sys/devices/system/cpu/{online,possible,present}``. An offline CPU keeps its
directory and its node link: cAdvisor must skip it through ``cpu/online`` (``IsCPUOnline``).
With ``l3`` (``{cpu: L3 id}``), each CPU's ``cache/index0..3`` as the kernel writes them (L1 data and
instruction and L2 per core, the L3 of the id; ``id``, ``level``, ``type``, ``size``, ``shared_cpu_map``
of the online CPUs sharing it, ``shared_cpu_list``); without it no ``cache`` directory at all (cAdvisor
then finds no cache and kubelet's uncore cache of a CPU is its socket).

``cpu_checkpoint_v2`` / ``cpu_checkpoint_v4`` write the file as kubelet's ``MarshalCheckpoint``
does (Go's ``json.Marshal`` of the struct: tag order, sorted map keys, no spaces):

- v2 (v1.34-v1.36): ``{"policyName","defaultCpuSet","entries"?,"checksum"}``, the checksum
  FNV-1a 32 over go-spew's ``%#v`` of ``*state.CPUManagerCheckpoint`` with ``Checksum: 0``
  (``k8s.io/utils/dump.ForHash``; v1.36+ rename ``CPUManagerCheckpointV2`` to the legacy name first).
- v4 (v1.37): the v2 fields and checksum, then ``data`` (the JSON of ``CPUManagerCheckpointData``)
  and ``dataChecksum`` = FNV-1a 32 of ``"(string)" + data`` (``checksum.New`` of a Go string).
"""

from __future__ import annotations

import json
import os
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import marshal_string
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gospew import GoMap, GoPtr, GoScalar, GoStruct, deep_hash, fnv1a_32
from ansible_collections.nodeops.numa_drift.tests.support.nodetree import OMIT, build_node_tree, node_list_text

__all__ = [
    "Cpu",
    "machine",
    "add_cpu_topology",
    "add_cpu_caches",
    "cpu_mask",
    "cpu_list",
    "parse_cpu_list",
    "cpu_v2_checksum",
    "cpu_data_checksum",
    "cpu_checkpoint_v2",
    "cpu_checkpoint_v3",
    "cpu_v3_checksum",
    "cpu_checkpoint_v4",
    "write_cpu_checkpoint",
    "read_cpu_checkpoint",
    "assigned",
    "rederive_default",
    "cpu_data",
    "build_cpu_node",
    "add_static_cpu_manager",
]

# cpu id -> (core_id, physical_package_id, NUMA node)
Cpu = Tuple[int, int, int]
Entries = Mapping[str, Mapping[str, str]]


def machine(sockets: int = 1, cores_per_socket: int = 4, threads_per_core: int = 2, numa_per_socket: int = 1) -> Dict[int, Cpu]:
    """CPU ids numbered as Linux numbers an x86 machine: every core's first thread, socket after
    socket, then every core's second thread (``cpu0`` and ``cpu<cores>`` are siblings)."""
    cores = sockets * cores_per_socket
    per_node = cores_per_socket // numa_per_socket
    out: Dict[int, Cpu] = {}
    for thread in range(threads_per_core):
        for index in range(cores):
            socket, core = divmod(index, cores_per_socket)
            node = socket * numa_per_socket + core // per_node
            out[thread * cores + index] = (core, socket, node)
    return out


def cpu_list(ids: Iterable[int]) -> str:
    """``cpuset.CPUSet.String()``: ``[0, 1, 2, 5]`` -> ``"0-2,5"``; ``""`` for no CPU."""
    ids = list(ids)
    return node_list_text(ids).strip() if ids else ""


def parse_cpu_list(text: str) -> List[int]:
    out: List[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        bounds = part.split("-", 1)
        out.extend(range(int(bounds[0]), int(bounds[-1]) + 1))
    return sorted(set(out))


def _write(root: str, relative: str, text: str) -> None:
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def cpu_mask(ids: Iterable[int], width: int) -> str:
    """The kernel's ``%*pb`` bitmap (``shared_cpu_map``): 32-bit hex words, highest first, for ``width`` CPUs."""
    value = sum(1 << cpu for cpu in set(ids))
    words = max(1, (width + 31) // 32)
    return ",".join("%08x" % ((value >> (32 * word)) & 0xFFFFFFFF) for word in reversed(range(words))) + "\n"


def add_cpu_caches(root: str, cpus: Mapping[int, Cpu], l3: Mapping[int, int], online: Iterable[int]) -> None:
    """``cpu<N>/cache/index0..3`` for every CPU of ``l3`` (``{cpu: L3 id}``): L1d, L1i and L2 shared by the core's online
    threads (id: the core's lowest thread), the L3 of the id shared by the online CPUs of that id."""
    online_ids = set(online)
    width = max(cpus) + 1
    for cpu, l3_id in sorted(l3.items()):
        core, package, _node = cpus[cpu]
        siblings = [other for other, spec in cpus.items() if spec[:2] == (core, package) and other in online_ids]
        sharing = [other for other, cache in l3.items() if cache == l3_id and other in online_ids]
        core_id = min(other for other, spec in cpus.items() if spec[:2] == (core, package))
        for index, (level, kind, size, cache_id, shared) in enumerate(((1, "Data", "48K", core_id, siblings), (1, "Instruction", "32K", core_id, siblings),
                                                                       (2, "Unified", "2048K", core_id, siblings), (3, "Unified", "32768K", l3_id, sharing))):
            base = "sys/devices/system/cpu/cpu%d/cache/index%d/" % (cpu, index)
            for name, text in (("id", "%d\n" % cache_id), ("level", "%d\n" % level), ("type", kind + "\n"), ("size", size + "\n"),
                               ("shared_cpu_map", cpu_mask(shared, width)), ("shared_cpu_list", node_list_text(shared) if shared else "\n")):
                _write(root, base + name, text)


def add_cpu_topology(root: str, cpus: Mapping[int, Cpu], online: Optional[Iterable[int]] = None, l3: Optional[Mapping[int, int]] = None) -> str:
    """Write ``cpus`` (``{id: (core, package, node)}``) under ``root``; ``online``: the online CPU
    ids (default every CPU); ``l3``: each CPU's L3 cache id (``add_cpu_caches``; None: no cache directory).
    The NUMA node directories must exist (``build_node_tree``'s ``nodes``)."""
    online_ids = sorted(cpus) if online is None else sorted(set(online))
    if l3 is not None:
        add_cpu_caches(root, cpus, l3, online_ids)
    base = "sys/devices/system/cpu"
    for cpu, (core, package, node) in sorted(cpus.items()):
        siblings = [other for other, spec in cpus.items() if spec[:2] == (core, package)]
        package_cpus = [other for other, spec in cpus.items() if spec[1] == package]
        _write(root, "%s/cpu%d/topology/core_id" % (base, cpu), "%d\n" % core)
        _write(root, "%s/cpu%d/topology/physical_package_id" % (base, cpu), "%d\n" % package)
        _write(root, "%s/cpu%d/topology/thread_siblings_list" % (base, cpu), node_list_text(siblings))
        _write(root, "%s/cpu%d/topology/core_siblings_list" % (base, cpu), node_list_text(package_cpus))
        if cpu:
            _write(root, "%s/cpu%d/online" % (base, cpu), "1\n" if cpu in online_ids else "0\n")
        link = os.path.join(root, "sys/devices/system/node/node%d/cpu%d" % (node, cpu))
        if not os.path.isdir(os.path.dirname(link)):
            raise ValueError("cpu%d is on NUMA node %d, which the tree has no directory for" % (cpu, node))
        if not os.path.lexists(link):
            os.symlink("../../cpu/cpu%d" % cpu, link)
    for node in sorted({spec[2] for spec in cpus.values()}):
        _write(root, "sys/devices/system/node/node%d/cpulist" % node,
               node_list_text(cpu for cpu in online_ids if cpus.get(cpu, (0, 0, -1))[2] == node) if online_ids else "\n")
    _write(root, base + "/online", node_list_text(online_ids))
    _write(root, base + "/possible", node_list_text(cpus))
    _write(root, base + "/present", node_list_text(cpus))
    return root


# --- cpu_manager_state ----------------------------------------------------------------------


def cpu_v2_checksum(policy: str, default: str, entries: Optional[Entries] = None) -> int:
    """The v2 checksum: ``dump.ForHash(&CPUManagerCheckpoint{..., Checksum: 0})`` under FNV-1a 32.
    ``entries`` is never nil in kubelet (``make`` in newCPUManagerCheckpoint*): ``map[]`` when empty."""
    nested = [(pod, GoMap("map[string]string", [(name, GoScalar("string", cpus)) for name, cpus in containers.items()]))
              for pod, containers in (entries or {}).items()]
    value = GoPtr(
        "state.CPUManagerCheckpoint",
        GoStruct(
            "state.CPUManagerCheckpoint",
            [
                ("PolicyName", GoScalar("string", policy)),
                ("DefaultCPUSet", GoScalar("string", default)),
                ("Entries", GoMap("map[string]map[string]string", nested)),
                ("Checksum", GoScalar("checksum.Checksum", 0)),
            ],
        ),
    )
    return deep_hash(value)


def cpu_v3_checksum(policy: str, default: str, entries: Optional[Entries], pod_entries: Mapping[str, str]) -> int:
    """v1.36's v3 checksum (``PodLevelResourceManagers`` on): ``checksum.New(&CPUManagerCheckpoint{..., PodEntries,
    Checksum: 0})``; a ``PodEntry`` holds a ``cpuset.CPUSet``, whose only field is ``elems map[int]struct{}``."""
    nested = [(pod, GoMap("map[string]string", [(name, GoScalar("string", cpus)) for name, cpus in containers.items()]))
              for pod, containers in (entries or {}).items()]
    pods = [(pod, GoStruct("state.PodEntry", [("CPUSet", GoStruct("cpuset.CPUSet", [
        ("elems", GoMap("map[int]struct {}", [(cpu, GoStruct("struct {}", [])) for cpu in parse_cpu_list(cpus)]))]))]))
        for pod, cpus in pod_entries.items()]
    name = "state.CPUManagerCheckpoint"
    return deep_hash(GoPtr(name, GoStruct(name, [
        ("PolicyName", GoScalar("string", policy)), ("DefaultCPUSet", GoScalar("string", default)),
        ("Entries", GoMap("map[string]map[string]string", nested)), ("PodEntries", GoMap("state.PodCPUAssignments", pods)),
        ("Checksum", GoScalar("checksum.Checksum", 0))])))


def _pod_entries_json(pod_entries: Mapping[str, str]) -> str:
    return "{%s}" % ",".join("%s:{%s}" % (marshal_string(pod), '"cpuSet":' + marshal_string(cpus) if cpus else "")
                             for pod, cpus in sorted(pod_entries.items()))


def cpu_checkpoint_v3(policy: str, default: str, entries: Optional[Entries], pod_entries: Mapping[str, str], checksum: Optional[int] = None) -> bytes:
    """v1.36's ``CPUManagerCheckpoint.MarshalCheckpoint`` with ``PodLevelResourceManagers`` on: the v2 fields, then
    ``podEntries`` (omitempty), then the v3 checksum; ``checksum`` overrides it."""
    value = cpu_v3_checksum(policy, default, entries, pod_entries) if checksum is None else checksum
    pods = ',"podEntries":' + _pod_entries_json(pod_entries) if pod_entries else ""
    return ("{%s%s,\"checksum\":%d}" % (_v2_fields(policy, default, entries), pods, value)).encode("utf-8")


def cpu_data_checksum(data: str) -> int:
    """``checksum.New(cp.Data)``: go-spew prints a Go string as ``(string)`` and its raw bytes."""
    return fnv1a_32(b"(string)" + data.encode("utf-8"))


def _entries_json(entries: Entries) -> str:
    return "{%s}" % ",".join(
        "%s:{%s}" % (marshal_string(pod), ",".join("%s:%s" % (marshal_string(name), marshal_string(cpus)) for name, cpus in sorted(containers.items())))
        for pod, containers in sorted(entries.items())
    )


def _v2_fields(policy: str, default: str, entries: Optional[Entries]) -> str:
    text = '"policyName":%s,"defaultCpuSet":%s' % (marshal_string(policy), marshal_string(default))
    if entries:  # omitempty
        text += ',"entries":' + _entries_json(entries)
    return text


def cpu_checkpoint_v2(policy: str, default: str, entries: Optional[Entries] = None, checksum: Optional[int] = None) -> bytes:
    """``CPUManagerCheckpointV2.MarshalCheckpoint``; ``checksum`` overrides the computed one."""
    value = cpu_v2_checksum(policy, default, entries) if checksum is None else checksum
    return ("{%s,\"checksum\":%d}" % (_v2_fields(policy, default, entries), value)).encode("utf-8")


def cpu_data(policy: str, default: str, entries: Optional[Entries] = None, pod_entries: Optional[Mapping[str, str]] = None) -> str:
    """The JSON of ``CPUManagerCheckpointData`` (podEntries, then baselines: omitted when empty)."""
    pods = ',"podEntries":' + _pod_entries_json(pod_entries) if pod_entries else ""
    return "{%s%s}" % (_v2_fields(policy, default, entries), pods)


def cpu_checkpoint_v4(policy: str, default: str, entries: Optional[Entries] = None, data: Optional[str] = None,
                      data_checksum: Optional[int] = None, checksum: Optional[int] = None) -> bytes:
    """v1.37's ``CPUManagerCheckpoint.MarshalCheckpoint``: the v2 part copied from the data, then
    ``data`` and ``dataChecksum``. ``data`` / ``data_checksum`` / ``checksum`` override a part."""
    data = cpu_data(policy, default, entries) if data is None else data
    data_sum = cpu_data_checksum(data) if data_checksum is None else data_checksum
    v2_sum = cpu_v2_checksum(policy, default, entries) if checksum is None else checksum
    fields = _v2_fields(policy, default, entries)
    return ("{%s,\"checksum\":%d,\"data\":%s,\"dataChecksum\":%d}" % (fields, v2_sum, marshal_string(data), data_sum)).encode("utf-8")


def write_cpu_checkpoint(root: str, content: bytes, kubelet_root_dir: str = "/var/lib/kubelet") -> str:
    path = os.path.join(root, kubelet_root_dir.lstrip("/"), "cpu_manager_state")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(content)
    return path


def read_cpu_checkpoint(content: bytes) -> Tuple[str, str, Dict[str, Dict[str, str]]]:
    """(policyName, defaultCpuSet, entries) of a v2 or v4 file (v4: its ``data``)."""
    document = json.loads(content)
    if "data" in document:
        document = json.loads(document["data"])
    return document.get("policyName", ""), document.get("defaultCpuSet", ""), document.get("entries") or {}


def assigned(entries: Entries) -> List[int]:
    return sorted({cpu for containers in entries.values() for cpus in containers.values() for cpu in parse_cpu_list(cpus)})


def rederive_default(online: Sequence[int], entries: Entries, reserved: Sequence[int] = ()) -> str:
    """The repair this slice proves kubelet accepts: defaultCpuSet = online - assigned (non-strict),
    or online - reserved - assigned (strict-cpu-reservation), entries untouched."""
    return cpu_list(sorted(set(online) - set(assigned(entries)) - set(reserved)))


def build_cpu_node(root: str, cpus: Mapping[int, Cpu], online: Optional[Iterable[int]] = None, config: Optional[Mapping[str, object]] = None,
                   checkpoint: Optional[bytes] = None, l3: Optional[Mapping[int, int]] = None) -> str:
    """A node tree (``build_node_tree``: one NUMA node directory per node of ``cpus``, kubelet's
    config at /var/lib/kubelet/config.yaml) with the CPU topology (``l3``: the L3 cache ids, see
    ``add_cpu_caches``) and ``cpu_manager_state``."""
    nodes = {node: {"cpulist": OMIT} for node in sorted({spec[2] for spec in cpus.values()})}
    build_node_tree(root, nodes=nodes, kubelet_config=dict(config or {}))
    add_cpu_topology(root, cpus, online, l3)
    if checkpoint is not None:
        write_cpu_checkpoint(root, checkpoint)
    return root


def add_static_cpu_manager(root: str, online: Iterable[int], default: str, entries: Entries, checksum: Optional[int] = None,
                           layout: str = "v2") -> str:
    """A static CPU manager (kube-reserved cpu 1) on a node tree of ``scenario.write_kubelet_node`` (its config.yaml is
    JSON): 2 sockets x 4 cores x 2 threads, one NUMA node per socket, ``online`` CPUs, and ``cpu_manager_state`` in
    ``layout`` holding ``default`` and ``entries``. Returns the file's path."""
    config_path = os.path.join(root, "var/lib/kubelet/config.yaml")
    with open(config_path, encoding="utf-8") as handle:
        config = json.load(handle)
    config.update(cpuManagerPolicy="static", kubeReserved=dict(config.get("kubeReserved") or {}, cpu="1"))
    with open(config_path, "w", encoding="utf-8") as handle:
        json.dump(config, handle)
    add_cpu_topology(root, machine(sockets=2, cores_per_socket=4, threads_per_core=2), online)
    writer = cpu_checkpoint_v4 if layout == "v4" else cpu_checkpoint_v2
    return write_cpu_checkpoint(root, writer("static", default, entries) if checksum is None else writer("static", default, entries, checksum=checksum))
