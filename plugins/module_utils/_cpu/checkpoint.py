# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``cpu_manager_state`` as the CPU manager's state package restores it, release by release.

:func:`restore` is kubelet's ``stateCheckpoint.restoreState`` (pkg/kubelet/cm/cpumanager/state/state_checkpoint.go)
up to the cpusets it parses: the layout the release reads (v1.34-v1.36: the top-level v2 fields, v1.36 with
``PodLevelResourceManagers`` the v3 fields first; v1.37: the ``data`` string of a v4 file, else the v3 fields, else the
v2 ones), the checksum it verifies, the policy name, each cpuset, and the pod-level ``podEntries`` kubelet restores with
``PodLevelResourceManagers`` on. It says what kubelet restores, or the error kubelet's restore returns
(``RestoreError.text``, kubelet's inner text), or that the file is in a layout this collection does not model
(``RestoreError.modelled`` false: v1 entries keyed by container id, which v1.34-v1.36 migrate through the runtime's
containers). Pure, stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Iterator, Mapping, Optional, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import UINT64_MAX, load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record, factory
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import CpuSetError, parse_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import go_json_kind
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gospew import GoMap, GoPtr, GoScalar, GoStruct, deep_hash, fnv1a_32
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.settings import CPU_STATE_FILE_NAME, go_quote

__all__ = ["CPU_STATE_FILE_NAME", "MAX_CPU_STATE_BYTES", "CORRUPTED", "CpuState", "RestoreError", "restore", "v2_checksum", "v3_checksum",
           "accepted_checksums", "data_checksum", "assigned_cpus", "pod_entry_cpus", "pod_level_cpus", "pinned_cpus", "recorded_cpus", "struct_field", "is_v4",
           "pod_entries_of", "decode_pod_entries", "v3_reader_checksums"]

MAX_CPU_STATE_BYTES = 4 * 1024 * 1024
CORRUPTED = "checkpoint is corrupted"  # checkpointmanager/errors ErrCorruptCheckpoint
Entries = Dict[str, Dict[str, str]]
PodEntries = Dict[str, str]  # pod -> its pod-level CPUs, as text (``podEntries``: ``{"<pod>": {"cpuSet": "<cpus>"}}``)


class CpuState(Record, frozen=True):
    """What kubelet restored: the layout it read, the policy name, ``defaultCpuSet`` and the exclusive entries
    (pod -> container -> CPUs), as text and as sets; ``checksum_zero``: the v2 checksum was 0, which kubelet takes
    unverified ("compat with old file backend"); the pod-level ``podEntries`` of the layout read (v3, v4), as text and
    as sets, and ``pod_level``: kubelet restores and counts them (``PodLevelResourceManagers`` on)."""

    layout: str
    policy_name: str
    default_text: str
    entries_text: Entries
    default: FrozenSet[int]
    entries: Dict[str, Dict[str, FrozenSet[int]]]
    checksum_zero: bool
    pod_entries_text: PodEntries = factory(dict)
    pod_entries: Dict[str, FrozenSet[int]] = factory(dict)
    pod_level: bool = False


class RestoreError(Record, frozen=True):
    """Kubelet's restore refuses the file (``text``: its inner error), or the file is in a layout this collection
    does not model (``modelled`` false: what kubelet does with it is not judged)."""

    text: str
    modelled: bool = True


class _Parts(Record, frozen=True):
    layout: str
    policy_name: str
    default: str
    entries: Entries
    checksum_zero: bool = False
    baselines: Entries = factory(dict)  # v1.37's data part: pod -> container -> baseline CPUs, as text
    pod_entries: PodEntries = factory(dict)  # v3 and v4: pod -> pod-level CPUs, as text
    pod_sets: Dict[str, FrozenSet[int]] = factory(dict)  # ... as the decoder parsed them (PodEntry.UnmarshalJSON)


LEGACY_TYPE = "state.CPUManagerCheckpoint"  # the name every release's fallback hashes under (strings.Replace of V1/V2/V3)


def _pod_entries_value(pod_sets: Optional[Mapping[str, FrozenSet[int]]]) -> GoMap:
    """``PodCPUAssignments`` as go-spew dumps it: pod -> ``PodEntry{CPUSet: cpuset.CPUSet{elems: map[int]struct{}}}``
    (state/state.go; k8s.io/utils/cpuset); None: a nil map (``"podEntries": null``)."""
    if pod_sets is None:
        return GoMap("state.PodCPUAssignments", None)
    return GoMap("state.PodCPUAssignments", [
        (pod, GoStruct("state.PodEntry", [("CPUSet", GoStruct("cpuset.CPUSet", [
            ("elems", GoMap("map[int]struct {}", [(cpu, GoStruct("struct {}", [])) for cpu in cpus]))]))]))
        for pod, cpus in pod_sets.items()])


def _hashed_struct(type_name: str, policy_name: str, default: str, entries: GoMap, *more: Tuple[str, GoMap]) -> int:
    """FNV-1a 32 of ``dump.ForHash`` (go-spew ``%#v``) of a checkpoint struct with ``Checksum: 0`` under ``type_name``:
    the policy, the default set, the ``entries`` as its version types them, then ``more`` fields."""
    fields = [("PolicyName", GoScalar("string", policy_name)), ("DefaultCPUSet", GoScalar("string", default)), ("Entries", entries)]
    return deep_hash(GoPtr(type_name, GoStruct(type_name, fields + list(more) + [("Checksum", GoScalar("checksum.Checksum", 0))])))


def _struct_checksum(type_name: str, policy_name: str, default: str, entries: Mapping[str, Mapping[str, str]], pod_entries: bool = False,
                     pod_sets: Optional[Mapping[str, FrozenSet[int]]] = None) -> int:
    """A v2-shaped struct's checksum (``entries`` is never nil: ``map[]`` when empty); ``pod_entries``: the v3 struct,
    with its ``PodEntries`` (``pod_sets``; empty: ``map[]``, as ``newCPUManagerCheckpointV3`` makes it)."""
    nested = GoMap("map[string]map[string]string", [
        (pod, GoMap("map[string]string", [(name, GoScalar("string", cpus)) for name, cpus in containers.items()])) for pod, containers in entries.items()])
    more = [("PodEntries", _pod_entries_value({} if pod_sets is None else pod_sets))] if pod_entries else []
    return _hashed_struct(type_name, policy_name, default, nested, *more)


def v2_checksum(policy_name: str, default: str, entries: Mapping[str, Mapping[str, str]]) -> int:
    """``CPUManagerCheckpointV2.VerifyChecksum`` under the legacy type name (checkpoint.go): what every release
    verifies, and what ``MarshalCheckpoint`` writes up to v1.35."""
    return _struct_checksum(LEGACY_TYPE, policy_name, default, entries)


def _v1_checksum(policy_name: str, default: str) -> int:
    """``CPUManagerCheckpointV1.VerifyChecksum`` of a file without entries (v1.34-v1.36 try the v1 reader): v1's
    ``Entries`` maps a container id to a string, empty here, hashed under the legacy name."""
    return _hashed_struct(LEGACY_TYPE, policy_name, default, GoMap("map[string]string", []))


def v3_checksum(policy_name: str, default: str, entries: Mapping[str, Mapping[str, str]], pod_sets: Mapping[str, FrozenSet[int]]) -> int:
    """The v3 struct's checksum under the legacy name: what v1.36's ``CPUManagerCheckpoint.MarshalCheckpoint`` writes
    (``PodLevelResourceManagers`` on), and what v1.37's v3 reader verifies after its own name."""
    return _struct_checksum(LEGACY_TYPE, policy_name, default, entries, pod_entries=True, pod_sets=pod_sets)


def _v2_reader_checksums(policy_name: str, default: str, entries: Mapping[str, Mapping[str, str]], minor: int, pod_level: bool) -> Iterator[int]:
    """``CPUManagerCheckpointV2.VerifyChecksum`` (non-zero): the legacy name at every release; v1.36 and v1.37 first
    under ``CPUManagerCheckpointV2``, unless ``PodLevelResourceManagers`` is on (checkpoint.go); v1.34-v1.36 then try
    the v1 reader, which reads a file without entries (state_checkpoint.go, loadAndMigrateCheckpointV2)."""
    yield _struct_checksum(LEGACY_TYPE, policy_name, default, entries)
    if minor >= 36 and not pod_level:
        yield _struct_checksum("state.CPUManagerCheckpointV2", policy_name, default, entries)
    if minor <= 36 and not entries:
        yield _v1_checksum(policy_name, default)


def v3_reader_checksums(policy_name: str, default: str, entries: Mapping[str, Mapping[str, str]], minor: int,
                        pod_sets: Optional[Mapping[str, FrozenSet[int]]]) -> Iterator[int]:
    """The v3 struct's ``VerifyChecksum`` (no zero exemption): v1.36's ``CPUManagerCheckpoint`` is the v3 struct, under the
    legacy name only; v1.37's ``CPUManagerCheckpointV3`` under its own name, then the legacy one."""
    names = ("state.CPUManagerCheckpointV3", LEGACY_TYPE) if minor >= 37 else (LEGACY_TYPE,)
    for name in names:
        yield _struct_checksum(name, policy_name, default, entries, pod_entries=True, pod_sets=pod_sets)


def accepted_checksums(policy_name: str, default: str, entries: Mapping[str, Mapping[str, str]], minor: int) -> Iterator[int]:
    """The non-zero checksums release 1.``minor`` accepts on a v2-shaped file (no ``data``, no ``podEntries``), with
    ``PodLevelResourceManagers`` off (state_checkpoint.go, checkpoint.go), computed one at a time, the legacy one that
    every release writes up to v1.36 first (``stored in accepted_checksums(...)`` stops at the first match): the v2
    reader's (:func:`_v2_reader_checksums`), and at v1.37 its v3 reader's before them, with an empty ``PodEntries``."""
    yield from _v2_reader_checksums(policy_name, default, entries, minor, pod_level=False)
    if minor >= 37:
        yield from v3_reader_checksums(policy_name, default, entries, minor, {})


def data_checksum(data: str) -> int:
    """v1.37's ``dataChecksum``: ``checksum.New(cp.Data)``, go-spew's ``(string)`` and the string's raw bytes."""
    return fnv1a_32(b"(string)" + data.encode("utf-8", "surrogatepass"))


# --------------------------------------------------------------------------- Go's encoding/json, for these structs


def struct_field(document: Mapping[str, Any], name: str) -> Any:
    """A struct field as ``encoding/json`` fills it: the exact key, else a key equal under case folding."""
    if name in document:
        return document[name]
    folded = [value for key, value in document.items() if key.lower() == name.lower()]
    return folded[-1] if folded else None


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError("json: cannot unmarshal %s into Go struct field %s of type string" % (go_json_kind(value), where))
    return value


def _checksum(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= UINT64_MAX:
        kind = "number %s" % value if go_json_kind(value) == "number" else go_json_kind(value)  # a number out of range: Go names it
        raise ValueError("json: cannot unmarshal %s into Go struct field %s of type checksum.Checksum" % (kind, where))
    return value


def _entries(value: Any, where: str) -> Entries:
    """``map[string]map[string]string``; ValueError for any other shape (a v1 file's strings included)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError("json: cannot unmarshal %s into Go struct field %s.entries of type map[string]map[string]string" % (go_json_kind(value), where))
    out: Entries = {}
    for pod, containers in value.items():
        if not isinstance(containers, dict):
            raise ValueError("json: cannot unmarshal %s into Go struct field %s.entries of type map[string]string" % (go_json_kind(containers), where))
        out[pod] = {name: _string(cpus, where + ".entries") for name, cpus in containers.items()}
    return out


def _pod_entry(value: Any) -> str:
    """``PodEntry.UnmarshalJSON`` (state/state.go) up to the parse: the entry decoded as ``podEntryJSON`` (null leaves it
    empty), its ``cpuSet`` text."""
    if value is None:
        return ""
    if not isinstance(value, dict):
        raise ValueError("json: cannot unmarshal %s into Go value of type state.podEntryJSON" % go_json_kind(value))
    return _string(struct_field(value, "cpuSet"), "podEntryJSON.cpuSet")


def decode_pod_entries(value: Any, where: str = "CPUManagerCheckpointV3") -> Tuple[PodEntries, Optional[Dict[str, FrozenSet[int]]]]:
    """``podEntries`` (``PodCPUAssignments``) as encoding/json decodes it: each entry's ``cpuSet`` parsed by
    ``PodEntry.UnmarshalJSON`` (``failed to parse cpuset: ...``); the texts, and the sets (None: a null map)."""
    if value is None:
        return {}, None
    if not isinstance(value, dict):
        raise ValueError("json: cannot unmarshal %s into Go struct field %s.podEntries of type state.PodCPUAssignments" % (go_json_kind(value), where))
    texts: PodEntries = {}
    sets: Dict[str, FrozenSet[int]] = {}
    for pod, entry in value.items():
        texts[pod] = _pod_entry(entry)
        try:
            sets[pod] = parse_cpuset(texts[pod])
        except CpuSetError as error:
            raise ValueError("failed to parse cpuset: %s" % error) from None
    return texts, sets


def _object(text: Union[str, bytes], type_name: str) -> Dict[str, Any]:
    try:
        document = load_json(text)
    except ValueError as error:
        raise ValueError("%s (%s)" % ("unexpected end of JSON input" if not text else "invalid JSON", error)) from None
    if not isinstance(document, dict):
        raise ValueError("json: cannot unmarshal %s into Go value of type %s" % (go_json_kind(document), type_name))
    return document


def _v2_parts(document: Mapping[str, Any], layout: str = "v2") -> _Parts:
    where = "CPUManagerCheckpointV2"
    return _Parts(layout, _string(struct_field(document, "policyName"), where + ".policyName"),
                  _string(struct_field(document, "defaultCpuSet"), where + ".defaultCpuSet"), _entries(struct_field(document, "entries"), where))


def _is_v1(document: Mapping[str, Any]) -> bool:
    entries = struct_field(document, "entries")
    return isinstance(entries, dict) and any(isinstance(value, str) for value in entries.values())


# --------------------------------------------------------------------------- the releases' readers


def _verified_v2(document: Mapping[str, Any], minor: int, pod_level: bool = False) -> _Parts:
    """The v2 reader (v1.34-v1.37; ``podEntries`` is no field of its struct): a checksum of 0 is taken unverified; a
    mismatch is ``checkpoint is corrupted``, except at v1.36, whose fallback to v1 returns the v1 attempt's error
    ("Return the last error we got"): a file with entries does not unmarshal as v1, whose entries map a container id
    to a string."""
    parts = _v2_parts(document)
    stored = _checksum(struct_field(document, "checksum"), "CPUManagerCheckpointV2.checksum")
    if stored == 0:
        return _Parts(parts.layout, parts.policy_name, parts.default, parts.entries, checksum_zero=True)
    if stored not in _v2_reader_checksums(parts.policy_name, parts.default, parts.entries, minor, pod_level):
        if minor == 36 and parts.entries:
            raise ValueError("json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string")
        raise ValueError(CORRUPTED)
    return parts


def _v3_parts(document: Mapping[str, Any], minor: int) -> Optional[_Parts]:
    """The v3 reader (v1.36 with ``PodLevelResourceManagers`` on, v1.37 without ``data``): the v3 struct decoded,
    ``podEntries`` included, and its checksum verified, 0 included (:func:`v3_reader_checksums`); None where it
    refuses the file, from which kubelet falls back to the v2 reader (state_checkpoint.go, loadAndMigrateCheckpointV3)."""
    where = "CPUManagerCheckpointV3" if minor >= 37 else "CPUManagerCheckpoint"
    try:
        parts = _v2_parts(document, "v3")
        pod_entries, pod_sets = decode_pod_entries(struct_field(document, "podEntries"), where)
        stored = _checksum(struct_field(document, "checksum"), where + ".checksum")
    except ValueError:
        return None
    if stored not in v3_reader_checksums(parts.policy_name, parts.default, parts.entries, minor, pod_sets):
        return None
    return _Parts("v3", parts.policy_name, parts.default, parts.entries, pod_entries=pod_entries, pod_sets=pod_sets or {})


def _v4_parts(document: Mapping[str, Any]) -> _Parts:
    """v1.37's v4 reader: ``data`` unmarshalled (``podEntries`` and ``baselines`` too), then ``dataChecksum`` verified
    over it; never a fallback once ``data`` or ``dataChecksum`` is set (state_checkpoint.go loadAndMigrateCheckpointV4)."""
    try:  # UnmarshalCheckpoint decodes the whole file first: the v2 part's types too, though v1.37 then reads only data
        _v2_parts(document)
        _checksum(struct_field(document, "checksum"), "CPUManagerCheckpoint.checksum")
    except ValueError as error:
        raise ValueError("could not load v4 checkpoint: failed to deserialize cpu manager checkpoint: %s" % error) from None
    data = _string(struct_field(document, "data"), "CPUManagerCheckpoint.data")
    stored = _checksum(struct_field(document, "dataChecksum"), "CPUManagerCheckpoint.dataChecksum")
    where = "CPUManagerCheckpointData"
    try:  # then data into CPUManagerCheckpointData: a PodEntry's own decoder stops at its error, before the checksum
        inner = _object(data, "state.CPUManagerCheckpointData")
        pod_entries, pod_sets = decode_pod_entries(struct_field(inner, "podEntries"), where)
    except ValueError as error:
        raise ValueError("could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: %s" % error) from None
    if stored != data_checksum(data):
        raise ValueError("could not load v4 checkpoint: " + CORRUPTED)
    try:
        baselines = _baselines(struct_field(inner, "baselines"))
    except ValueError as error:
        raise ValueError("could not load v4 checkpoint: failed to deserialize cpu manager checkpoint data: %s" % error) from None
    return _Parts("v4", _string(struct_field(inner, "policyName"), where + ".policyName"),
                  _string(struct_field(inner, "defaultCpuSet"), where + ".defaultCpuSet"), _entries(struct_field(inner, "entries"), where),
                  baselines=baselines, pod_entries=pod_entries, pod_sets=pod_sets or {})


class _NotModelled(ValueError):
    """A layout kubelet may read but this collection does not model."""


def _baselines(value: Any) -> Entries:
    """``map[string]map[string]ContainerCPUs`` (``{"baseline": "<cpus>"}``), as text; ValueError for another shape."""
    where = "CPUManagerCheckpointData.baselines"
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(containers is None or isinstance(containers, dict) for containers in value.values()):
        raise ValueError("json: cannot unmarshal %s into Go struct field %s of type map[string]state.ContainerCPUs" % (go_json_kind(value), where))
    out: Entries = {}
    for pod, containers in value.items():
        for name, cpus in (containers or {}).items():  # null decodes as a nil map, or as an empty struct below
            if cpus is None:
                cpus = {}
            if not isinstance(cpus, dict):
                raise ValueError("json: cannot unmarshal %s into Go struct field %s of type state.ContainerCPUs" % (go_json_kind(cpus), where))
            out.setdefault(pod, {})[name] = _string(struct_field(cpus, "baseline"), where + ".baseline")
    return out


def is_v4(document: Mapping[str, Any]) -> bool:
    return bool(struct_field(document, "data")) or struct_field(document, "dataChecksum") not in (None, 0)


def _read_parts(raw: bytes, minor: int, pod_level: bool) -> Union[_Parts, RestoreError]:
    """The reader chain of release 1.``minor`` (``pod_level``: ``PodLevelResourceManagers`` on): v4, v3, v2 (v1)."""
    try:
        document = _object(raw, "state.CPUManagerCheckpointV2")
    except ValueError as error:
        return RestoreError(str(error))
    # A v1 file's entries map container ids, which kubelet up to v1.36 migrates through the runtime's containers (not
    # judged here); v1.37 has no v1 reader, and its v2 reader refuses their strings.
    if _is_v1(document) and minor < 37:
        return RestoreError("a v1 layout (entries keyed by container id), which this collection does not read", modelled=False)
    try:
        if minor >= 37 and is_v4(document):
            return _v4_parts(document)
        v3 = _v3_parts(document, minor) if minor >= 37 or (minor == 36 and pod_level) else None
        return v3 or _verified_v2(document, minor, pod_level)
    except _NotModelled as error:
        return RestoreError(str(error), modelled=False)
    except ValueError as error:
        return RestoreError(str(error))


def _parsed(parts: _Parts, policy: str, minor: int, baselines_on: bool = False, pod_level: bool = False) -> Union[CpuState, RestoreError]:
    """restoreState's checks after the load: the policy name, then ``defaultCpuSet``, then each entry, then (v1.37 with
    ``InPlacePodVerticalScalingExclusiveCPUs`` on: ``baselines_on``) each baseline; the pod-level entries (parsed as
    they were decoded) are restored with ``PodLevelResourceManagers`` on (``pod_level``)."""
    if parts.policy_name != policy:
        return RestoreError("configured policy %s differs from state checkpoint policy %s" % (go_quote(policy), go_quote(parts.policy_name)))
    try:
        default = parse_cpuset(parts.default)
    except CpuSetError as error:
        return RestoreError("could not parse default %s set %s: %s" % ("CPU" if minor >= 37 else "cpu", go_quote(parts.default), error))
    entries: Dict[str, Dict[str, FrozenSet[int]]] = {}
    for pod, containers in parts.entries.items():
        for name, text in containers.items():
            try:
                entries.setdefault(pod, {})[name] = parse_cpuset(text)
            except CpuSetError as error:
                return RestoreError("could not parse cpuset %s for container %s in pod %s: %s" % (go_quote(text), go_quote(name), go_quote(pod), error))
    for pod, containers in (parts.baselines if baselines_on and minor >= 37 else {}).items():
        for name, text in containers.items():
            try:
                parse_cpuset(text)
            except CpuSetError as error:
                return RestoreError("could not parse Baseline cpuset %s for container %s in pod %s: %s" % (
                    go_quote(text), go_quote(name), go_quote(pod), error))
    return CpuState(parts.layout, parts.policy_name, parts.default, parts.entries, default, entries, parts.checksum_zero,
                    parts.pod_entries, parts.pod_sets, pod_level)


def restore(raw: bytes, policy: str, minor: int, baselines_on: bool = False, pod_level: bool = False) -> Union[CpuState, RestoreError]:
    """What kubelet 1.``minor`` restores from ``raw`` with the configured CPU manager ``policy`` (``static``, ``none``);
    ``baselines_on``: the ``InPlacePodVerticalScalingExclusiveCPUs`` gate (v1.37 parses each baseline); ``pod_level``:
    the ``PodLevelResourceManagers`` gate (v1.36: the v3 reader first; v1.36 and v1.37 restore ``podEntries``)."""
    parts = _read_parts(raw, minor, pod_level and minor >= 36)
    if isinstance(parts, RestoreError):
        return parts
    return _parsed(parts, policy, minor, baselines_on, pod_level and minor >= 36)


def assigned_cpus(state: CpuState) -> FrozenSet[int]:
    """Every CPU an exclusive entry holds."""
    return frozenset(cpu for containers in state.entries.values() for cpus in containers.values() for cpu in cpus)


def pod_entry_cpus(state: CpuState) -> FrozenSet[int]:
    """Every CPU a pod-level entry of the file holds, whether kubelet restores them or not."""
    return frozenset(cpu for cpus in state.pod_entries.values() for cpu in cpus)


def pod_level_cpus(state: CpuState) -> FrozenSet[int]:
    """Every CPU a pod-level entry holds, where kubelet restores them (``PodLevelResourceManagers`` on)."""
    return pod_entry_cpus(state) if state.pod_level else frozenset()


def pinned_cpus(state: CpuState) -> FrozenSet[int]:
    """Every CPU kubelet holds for a pod: the exclusive entries and the restored pod-level ones."""
    return assigned_cpus(state) | pod_level_cpus(state)


def pod_entries_of(state: CpuState) -> Dict[str, Dict[str, FrozenSet[int]]]:
    """The restored pod-level entries shaped as entries (pod -> "" -> CPUs), to be named and compared with them."""
    return {pod: {"": cpus} for pod, cpus in state.pod_entries.items()} if state.pod_level else {}


def recorded_cpus(state: CpuState) -> FrozenSet[int]:
    """Every CPU the file records as kubelet counts them (validateState): the shared pool, the exclusive entries and
    the restored pod-level entries."""
    return state.default | pinned_cpus(state)
