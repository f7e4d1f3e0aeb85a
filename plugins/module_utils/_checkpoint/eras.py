# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The four era readers with their fallbacks (3.5): ``UnmarshalCheckpoint`` and ``VerifyChecksum`` per release."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import data_checksum, legacy_checksum, v1_name_checksum, v2_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    CORRUPTED,
    CheckpointFields,
    DATA_KEYS,
    ERAS,
    ERA_136_GATE_OFF,
    ERA_136_GATE_ON,
    ERA_137,
    ERA_LEGACY,
    LEGACY_KEYS,
    V2_KEYS,
    V3_KEYS,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import GoJsonError, parse_document

__all__ = [
    "EraResult",
    "read_as_era",
]


# --- The era readers (UnmarshalCheckpoint, VerifyChecksum) -----------------------------


class EraResult(Record, frozen=True):
    accepted: bool
    via: Optional[str]  # which variant loaded: legacy, v1-name, zero, v2, v3
    error: Optional[str]


def _accept(via: str) -> EraResult:
    return EraResult(True, via, None)


def _reject(error: str) -> EraResult:
    return EraResult(False, None, error)


class ParsedDocument:
    """A parsed file with each era struct's decode and each checksum variant computed once."""

    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self._decoded: Dict[Tuple[str, ...], Tuple[CheckpointFields, Optional[str]]] = {}
        self._checksums: Dict[str, int] = {}

    def decoded(self, keys: Tuple[str, ...]) -> Tuple[CheckpointFields, Optional[str]]:
        if keys not in self._decoded:
            self._decoded[keys] = decode_fields(self.tree, keys)
        return self._decoded[keys]

    def checksum(self, variant: str) -> int:
        """legacy, v1-name (over the V1 decode) or v2 (over the V2 decode)."""
        if variant not in self._checksums:
            if variant == "v2":
                self._checksums[variant] = v2_checksum(self.decoded(V2_KEYS)[0])
            else:
                compute = legacy_checksum if variant == "legacy" else v1_name_checksum
                self._checksums[variant] = compute(self.decoded(LEGACY_KEYS)[0])
        return self._checksums[variant]


def _read_v1(doc: ParsedDocument, allow_zero: bool, allow_v1_name: bool) -> EraResult:
    fields, error = doc.decoded(LEGACY_KEYS)
    if error:
        return _reject(error)
    if allow_zero and fields.checksum == 0:
        return _accept("zero")  # "accept empty checksum for compatibility with old file backend"
    if allow_v1_name and fields.checksum == doc.checksum("v1-name"):
        return _accept("v1-name")
    if fields.checksum == doc.checksum("legacy"):
        return _accept("legacy")
    return _reject(CORRUPTED)


def _read_v2(doc: ParsedDocument) -> EraResult:
    fields, error = doc.decoded(V2_KEYS)
    if error:
        return _reject(error)
    if fields.checksum == doc.checksum("v2"):
        return _accept("v2")
    return _reject(CORRUPTED)


def _read_v3(doc: ParsedDocument) -> Tuple[EraResult, bool]:
    """1.37 steps 1-5; the flag says whether a failure forbids falling back."""
    fields, error = doc.decoded(V3_KEYS)
    if error is None:
        error = _data_error(fields.data)
    if error is None and fields.data_checksum != data_checksum(fields.data):
        error = CORRUPTED
    if error is None:
        return _accept("v3"), False
    no_fallback = fields.data != "" or fields.data_checksum != 0
    return _reject("could not load v3 checkpoint: " + error), no_fallback


def _data_error(data: str) -> Optional[str]:
    try:
        _fields, error = decode_fields(parse_document(data.encode("utf-8")), DATA_KEYS)
    except GoJsonError as syntax:
        error = str(syntax)
    return None if error is None else "failed to deserialize memory manager checkpoint data: " + error


def read_as_era(document: Any, era: str) -> EraResult:
    """Would kubelet of ``era`` load this parsed document? (decode + checksum; not policy)."""
    doc = document if isinstance(document, ParsedDocument) else ParsedDocument(document)
    if era == ERA_LEGACY:
        fields, error = doc.decoded(LEGACY_KEYS)
        if error:
            return _reject(error)
        return _accept("legacy") if fields.checksum == doc.checksum("legacy") else _reject(CORRUPTED)
    if era == ERA_136_GATE_OFF:
        return _read_v1(doc, allow_zero=True, allow_v1_name=True)
    if era == ERA_136_GATE_ON:
        v2 = _read_v2(doc)
        return v2 if v2.accepted else _read_v1(doc, allow_zero=True, allow_v1_name=False)
    if era == ERA_137:
        v3, no_fallback = _read_v3(doc)
        if v3.accepted or no_fallback:
            return v3
        v2 = _read_v2(doc)
        return v2 if v2.accepted else _read_v1(doc, allow_zero=True, allow_v1_name=False)
    raise ValueError("unknown kubelet era %r (known: %s)" % (era, ", ".join(ERAS)))
