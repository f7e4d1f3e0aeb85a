# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``cpu_manager_state`` with only ``defaultCpuSet`` re-derived, written as kubelet's ``MarshalCheckpoint`` writes it.

The file keeps its layout, so that every supported release reads it as before (pkg/kubelet/cm/cpumanager/state/
checkpoint.go):

* v2 (what v1.34-v1.36 write): ``{"policyName","defaultCpuSet","entries"?,"checksum"}``, ``checksum`` over the
  struct (:func:`_cpu.checkpoint.v2_checksum`);
* v4 (what v1.37 writes): the same v2 part for older releases, then ``data`` (the JSON of
  ``CPUManagerCheckpointData``) and ``dataChecksum`` over it; both halves say the same, as ``MarshalCheckpoint``
  copies the data's fields into the v2 part. A v1.37 kubelet trusts only ``data``, an older one only the v2 part.

Go's ``json.Marshal`` order: struct fields in tag order, map keys sorted, ``entries`` omitted when empty. The policy
name and every entry's text are kept as they are: only ``defaultCpuSet`` is derived data (policy_static.go,
validateState), and every exclusive entry is a fact. A file with anything else in it (v1.37's ``podEntries``,
``baselines``, fields this collection does not know), whose own checksums do not vouch for it (a release that reads only
one half may have taken it), or whose two halves disagree is not rewritten. Pure.
"""

from __future__ import annotations

from typing import Any, FrozenSet, Mapping, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.checkpoint import (
    CpuState,
    accepted_checksums,
    data_checksum,
    is_v4,
    struct_field,
    v2_checksum,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import SUPPORTED_RELEASES
from ansible_collections.nodeops.numa_drift.plugins.module_utils._cpu.cpuset import format_cpuset
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import marshal_object, marshal_string

__all__ = ["CpuRewrite", "rewrite_default_set", "marshal_v2", "marshal_v4"]

Entries = Mapping[str, Mapping[str, str]]
JUDGED_MINORS = tuple(int(release.split(".")[1]) for release in SUPPORTED_RELEASES)
V2_KEYS = ("policyName", "defaultCpuSet", "entries", "checksum")
V4_KEYS = V2_KEYS + ("data", "dataChecksum")
DATA_KEYS = ("policyName", "defaultCpuSet", "entries")


class CpuRewrite(Record, frozen=True):
    """The bytes to write (``content``) in ``layout`` (v2, v4), with ``defaultCpuSet`` = ``default``."""

    layout: str
    default: str
    content: bytes


def _entries(entries: Entries) -> str:
    return marshal_object((pod, marshal_object((name, marshal_string(cpus)) for name, cpus in sorted(entries[pod].items()))) for pod in sorted(entries))


def _fields(policy: str, default: str, entries: Entries) -> list:
    fields = [("policyName", marshal_string(policy)), ("defaultCpuSet", marshal_string(default))]
    return fields + ([("entries", _entries(entries))] if entries else [])  # `json:"entries,omitempty"`


def _data(policy: str, default: str, entries: Entries) -> str:
    """``CPUManagerCheckpointData`` as v1.37 marshals it (podEntries and baselines empty: omitted)."""
    return marshal_object(_fields(policy, default, entries))


def marshal_v2(policy: str, default: str, entries: Entries) -> bytes:
    """``CPUManagerCheckpointV2.MarshalCheckpoint``: the checksum over the struct with ``Checksum: 0``."""
    checksum = v2_checksum(policy, default, entries)
    return marshal_object(_fields(policy, default, entries) + [("checksum", str(checksum))]).encode("utf-8")


def marshal_v4(policy: str, default: str, entries: Entries) -> bytes:
    """v1.37's ``CPUManagerCheckpoint.MarshalCheckpoint``: the v2 part copied from the data, both checksums."""
    data = _data(policy, default, entries)
    v2 = _fields(policy, default, entries) + [("checksum", str(v2_checksum(policy, default, entries)))]
    return marshal_object(v2 + [("data", marshal_string(data)), ("dataChecksum", str(data_checksum(data)))]).encode("utf-8")


def _unknown_keys(document: Mapping[str, Any], known: Tuple[str, ...]) -> Tuple[str, ...]:
    # encoding/json folds case when it matches keys; so does this check (a "defaultCPUSet" is the same field).
    folded = {key.lower() for key in known}
    return tuple(sorted(key for key in document if key.lower() not in folded))


def _same_state(document: Mapping[str, Any], state: CpuState) -> bool:
    return ((struct_field(document, "policyName") or "") == state.policy_name and (struct_field(document, "defaultCpuSet") or "") == state.default_text
            and (struct_field(document, "entries") or {}) == state.entries_text)


def _checksum_problem(document: Mapping[str, Any], data: Any) -> str:
    """Why the file's own checksums do not vouch for it ("" when they do): the v2 part's (never 0; one some supported
    release verifies, :func:`accepted_checksums`), and a v4 file's ``dataChecksum`` over ``data``. A repair writes fresh
    checksums, so it must never start from bytes no release's check would pass (a release that reads only the other half
    would take them)."""
    stored = struct_field(document, "checksum")
    policy, default, entries = (struct_field(document, key) or fallback for key, fallback in (("policyName", ""), ("defaultCpuSet", ""), ("entries", {})))
    if not stored or not any(stored in accepted_checksums(policy, default, entries, minor) for minor in JUDGED_MINORS):
        return "its v2 checksum does not match its content"
    if data is not None and struct_field(document, "dataChecksum") != data_checksum(data):
        return "its dataChecksum does not match its data part"
    return ""


def _layout_problem(raw: bytes, state: CpuState) -> Union[str, Mapping[str, Any]]:
    """The file's document when this collection may rewrite it, else why not."""
    document = load_json(raw)
    unknown = _unknown_keys(document, V4_KEYS)
    if unknown:
        return "it holds fields this collection does not rewrite (%s)" % ", ".join(unknown)
    text = struct_field(document, "data")
    if text is not None and not isinstance(text, str):
        return "its data field is not a string"
    problem = _checksum_problem(document, text if is_v4(document) else None)
    if problem:
        return problem
    if not is_v4(document):
        return document
    data = load_json(text or "")
    if not isinstance(data, dict):
        return "its data part is not an object"
    unknown = _unknown_keys(data, DATA_KEYS)
    if unknown:
        return "its data part holds fields this collection does not rewrite (%s)" % ", ".join(unknown)
    if not (_same_state(document, state) and _same_state(data, state)):
        return "its v2 part and its data part disagree (policy, defaultCpuSet or entries)"
    return document


def rewrite_default_set(raw: bytes, state: CpuState, default: FrozenSet[int]) -> Union[CpuRewrite, str]:
    """``raw`` (which kubelet restored as ``state``) with ``defaultCpuSet`` = ``default`` and nothing else changed,
    in its own layout; or why it is not rewritten."""
    try:
        document = _layout_problem(raw, state)
    except ValueError as error:
        return "it does not read as JSON (%s)" % error
    if isinstance(document, str):
        return document
    text = format_cpuset(default)
    v4 = is_v4(document)
    content = (marshal_v4 if v4 else marshal_v2)(state.policy_name, text, state.entries_text)
    return CpuRewrite("v4" if v4 else "v2", text, content)
