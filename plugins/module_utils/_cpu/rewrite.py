# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``cpu_manager_state`` with only ``defaultCpuSet`` re-derived, written as kubelet's ``MarshalCheckpoint`` writes it.

The file keeps its layout, so that every supported release reads it as before (pkg/kubelet/cm/cpumanager/state/
checkpoint.go):

* v2 (what v1.34-v1.36 write): ``{"policyName","defaultCpuSet","entries"?,"checksum"}``, ``checksum`` over the
  struct (:func:`_cpu.checkpoint.v2_checksum`);
* v3 (what v1.36 writes with ``PodLevelResourceManagers`` on): the v2 fields and ``podEntries``, ``checksum`` over the
  v3 struct, its pod-level CPU sets included, under the legacy name (:func:`_cpu.checkpoint.v3_checksum`), which v1.36
  and v1.37 verify;
* v4 (what v1.37 writes): the same v2 part for older releases, then ``data`` (the JSON of
  ``CPUManagerCheckpointData``: ``podEntries`` and ``baselines`` too) and ``dataChecksum`` over it; both halves say the
  same, as ``MarshalCheckpoint`` copies the data's fields into the v2 part. A v1.37 kubelet trusts only ``data``, an
  older one only the v2 part.

Go's ``json.Marshal`` order: struct fields in tag order, map keys sorted, ``entries``, ``podEntries`` and
``baselines`` omitted when empty. The policy name, every entry's, pod-level entry's and baseline's text are kept as they
are: only ``defaultCpuSet`` is derived data (policy_static.go, validateState); the rest are facts. A file with anything
else in it (fields this collection does not know), whose own checksums do not vouch for it (a release that reads only
one half may have taken it), or whose two halves disagree is not rewritten. Pure.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, Mapping, Optional, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import (
    CpuState,
    accepted_checksums,
    data_checksum,
    decode_pod_entries,
    is_v4,
    struct_field,
    v2_checksum,
    v3_checksum,
    v3_reader_checksums,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import SUPPORTED_RELEASES, release_minor
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import format_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import marshal_object, marshal_string

__all__ = ["CpuRewrite", "rewrite_default_set", "marshal_v2"]

Entries = Mapping[str, Mapping[str, str]]
PodEntries = Mapping[str, str]
JUDGED_MINORS = tuple(release_minor(release) for release in SUPPORTED_RELEASES)
V2_KEYS = ("policyName", "defaultCpuSet", "entries", "checksum")
V3_KEYS = V2_KEYS + ("podEntries",)
V4_KEYS = V2_KEYS + ("data", "dataChecksum")
DATA_KEYS = ("policyName", "defaultCpuSet", "entries", "podEntries", "baselines")


class CpuRewrite(Record, frozen=True):
    """The bytes to write (``content``) in ``layout`` (v2, v4), with ``defaultCpuSet`` = ``default``."""

    layout: str
    default: str
    content: bytes


class _Facts(Record, frozen=True):
    """What a rewrite keeps: the policy name, the entries, the pod-level entries (text, and the sets they parse to) and
    v1.37's baselines, as the file holds them."""

    policy: str
    entries: Entries
    pod_entries: PodEntries
    pod_sets: Mapping[str, FrozenSet[int]]
    baselines: Entries


def _nested(entries: Entries, leaf) -> str:
    return marshal_object((pod, marshal_object((name, leaf(value)) for name, value in sorted(entries[pod].items()))) for pod in sorted(entries))


def _pod_entries(pod_entries: PodEntries) -> str:
    # PodEntry.MarshalJSON: {"cpuSet": "<cpus>"}, the text omitted when empty.
    return marshal_object((pod, marshal_object([("cpuSet", marshal_string(text))] if text else [])) for pod, text in sorted(pod_entries.items()))


def _fields(policy: str, default: str, entries: Entries) -> list:
    fields = [("policyName", marshal_string(policy)), ("defaultCpuSet", marshal_string(default))]
    return fields + ([("entries", _nested(entries, marshal_string))] if entries else [])  # `json:"entries,omitempty"`


def _data(facts: _Facts, default: str) -> str:
    """``CPUManagerCheckpointData`` as v1.37 marshals it (``podEntries``, ``baselines``: omitempty)."""
    fields = _fields(facts.policy, default, facts.entries)
    fields += [("podEntries", _pod_entries(facts.pod_entries))] if facts.pod_entries else []
    fields += [("baselines", _nested(facts.baselines, lambda text: marshal_object([("baseline", marshal_string(text))])))] if facts.baselines else []
    return marshal_object(fields)


def marshal_v2(policy: str, default: str, entries: Entries) -> bytes:
    """``CPUManagerCheckpointV2.MarshalCheckpoint``: the checksum over the struct with ``Checksum: 0``."""
    checksum = v2_checksum(policy, default, entries)
    return marshal_object(_fields(policy, default, entries) + [("checksum", str(checksum))]).encode("utf-8")


def _marshal_v3(facts: _Facts, default: str) -> bytes:
    """v1.36's ``CPUManagerCheckpoint.MarshalCheckpoint`` (the v3 struct): ``podEntries`` after the entries, the checksum
    over the struct with its pod-level CPU sets, under the legacy name."""
    checksum = v3_checksum(facts.policy, default, facts.entries, facts.pod_sets)
    fields = _fields(facts.policy, default, facts.entries) + ([("podEntries", _pod_entries(facts.pod_entries))] if facts.pod_entries else [])
    return marshal_object(fields + [("checksum", str(checksum))]).encode("utf-8")


def _marshal_v4(facts: _Facts, default: str) -> bytes:
    """v1.37's ``CPUManagerCheckpoint.MarshalCheckpoint``: the v2 part copied from the data, both checksums."""
    data = _data(facts, default)
    v2 = _fields(facts.policy, default, facts.entries) + [("checksum", str(v2_checksum(facts.policy, default, facts.entries)))]
    return marshal_object(v2 + [("data", marshal_string(data)), ("dataChecksum", str(data_checksum(data)))]).encode("utf-8")


def _unknown_keys(document: Mapping[str, Any], known: Tuple[str, ...]) -> Tuple[str, ...]:
    # encoding/json folds case when it matches keys; so does this check (a "defaultCPUSet" is the same field).
    folded = {key.lower() for key in known}
    return tuple(sorted(key for key in document if key.lower() not in folded))


def _same_state(document: Mapping[str, Any], state: CpuState) -> bool:
    return ((struct_field(document, "policyName") or "") == state.policy_name and (struct_field(document, "defaultCpuSet") or "") == state.default_text
            and (struct_field(document, "entries") or {}) == state.entries_text)


def _vouched(stored: Any, policy: str, default: str, entries: Entries, pod_sets: Optional[Mapping[str, FrozenSet[int]]]) -> bool:
    """Some supported release's reader verifies ``stored`` (never 0): the v2 reader's (:func:`accepted_checksums`), or
    the v3 reader's over the file's own pod-level entries (v1.37's, under both names)."""
    if not stored:
        return False
    if any(stored in accepted_checksums(policy, default, entries, minor) for minor in JUDGED_MINORS):
        return True
    return pod_sets is not None and stored in v3_reader_checksums(policy, default, entries, max(JUDGED_MINORS), pod_sets)


def _checksum_problem(document: Mapping[str, Any], data: Any, pod_sets: Optional[Mapping[str, FrozenSet[int]]]) -> str:
    """Why the file's own checksums do not vouch for it ("" when they do): the v2 part's (:func:`_vouched`), and a v4
    file's ``dataChecksum`` over ``data``. A repair writes fresh checksums, so it must never start from bytes no
    release's check would pass (a release that reads only the other half would take them)."""
    policy, default, entries = (struct_field(document, key) or fallback for key, fallback in (("policyName", ""), ("defaultCpuSet", ""), ("entries", {})))
    if not _vouched(struct_field(document, "checksum"), policy, default, entries, pod_sets):
        return "its checksum does not match its content"
    if data is not None and struct_field(document, "dataChecksum") != data_checksum(data):
        return "its dataChecksum does not match its data part"
    return ""


def _facts(document: Mapping[str, Any], state: CpuState) -> _Facts:
    """The facts a rewrite keeps, from the part kubelet reads: the v4 data part, else the file (ValueError: podEntries
    or baselines that do not decode)."""
    pod_entries, pod_sets = decode_pod_entries(struct_field(document, "podEntries"))
    baselines: Dict[str, Dict[str, str]] = {}
    for pod, containers in (struct_field(document, "baselines") or {}).items():
        for name, baseline in (containers or {}).items():
            baselines.setdefault(pod, {})[name] = struct_field(baseline or {}, "baseline") or ""
    return _Facts(state.policy_name, state.entries_text, pod_entries, pod_sets or {}, baselines)


def _layout_problem(raw: bytes, state: CpuState) -> Union[str, Tuple[str, _Facts]]:
    """The file's layout and facts when this collection may rewrite it, else why not."""
    document = load_json(raw)
    v4 = is_v4(document)
    unknown = _unknown_keys(document, V4_KEYS if v4 else V3_KEYS)
    if unknown:
        return "it holds fields this collection does not rewrite (%s)" % ", ".join(unknown)
    text = struct_field(document, "data")
    if text is not None and not isinstance(text, str):
        return "its data field is not a string"
    if not v4:
        facts = _facts(document, state)
        problem = _checksum_problem(document, None, facts.pod_sets if struct_field(document, "podEntries") is not None else None)
        return problem or ("v3" if facts.pod_entries else "v2", facts)
    problem = _checksum_problem(document, text, None)
    if problem:
        return problem
    data = load_json(text or "")
    if not isinstance(data, dict):
        return "its data part is not an object"
    unknown = _unknown_keys(data, DATA_KEYS)
    if unknown:
        return "its data part holds fields this collection does not rewrite (%s)" % ", ".join(unknown)
    if not (_same_state(document, state) and _same_state(data, state)):
        return "its v2 part and its data part disagree (policy, defaultCpuSet or entries)"
    return "v4", _facts(data, state)


def rewrite_default_set(raw: bytes, state: CpuState, default: FrozenSet[int]) -> Union[CpuRewrite, str]:
    """``raw`` (which kubelet restored as ``state``) with ``defaultCpuSet`` = ``default`` and nothing else changed,
    in its own layout; or why it is not rewritten."""
    try:
        found = _layout_problem(raw, state)
    except ValueError as error:
        return "it does not read as JSON (%s)" % error
    if isinstance(found, str):
        return found
    layout, facts = found
    text = format_cpuset(default)
    if layout == "v2":
        return CpuRewrite(layout, text, marshal_v2(facts.policy, text, facts.entries))
    return CpuRewrite(layout, text, (_marshal_v3 if layout == "v3" else _marshal_v4)(facts, text))
