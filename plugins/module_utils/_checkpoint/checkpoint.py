# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's memory manager checkpoint (``memory_manager_state``): what a probe knows of one file.

Spec references are to ``spec/kubelet-memory-manager.md``. The model, the decoders, the checksums, the
era readers and the serializer are in :mod:`.model`, :mod:`.decode`, :mod:`.checksum`, :mod:`.eras` and
:mod:`.marshal`; here: layout detection (3.1), the layout a repair may write (3.6), and the inputs a
repair must refuse because kubelet never writes them (4.5 [R], 9).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.checksum import legacy_checksum
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.decode import decode_fields
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.eras import EraResult, ParsedDocument, _reject, read_as_era
# tests/integration/test_sandbox_kubelet.py writes a file with ``checkpoint.marshal_legacy``.
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.marshal import marshal_legacy  # noqa: F401 pylint: disable=unused-import
from ansible_collections.nodeops.numa_drift.plugins.module_utils._checkpoint.model import (
    BLOCK_KEYS,
    CORRUPTED,
    CheckpointFields,
    DATA_KEYS,
    ERAS,
    ERA_137,
    ERA_RELEASES,
    MAX_CHECKPOINT_BYTES,
    NODE_KEYS,
    POD_ENTRY_KEYS,
    TABLE_KEYS,
    V2_KEYS,
    V3_KEYS,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import GoJsonError, JsonObject, fold_key, parse_document

__all__ = [
    "CheckpointReport",
    "inspect_checkpoint",
]


# --- Layout, content and what a repair may do (docs/safety.md) ------------------------


class CheckpointReport(Record, frozen=True):
    """Everything a probe needs to know about one checkpoint file."""

    size: int
    syntax_error: Optional[str]
    shape: str  # keys present: legacy | v2 | v3 | not-json
    layout: str  # legacy | v1-name | v2 | v3 | v3-broken | zero | unverified | not-json | too-large
    format_label: str  # the vectors' labels: v1-legacy, v1-zero-checksum, v2, v2-zero-checksum, v3, v3-broken, not-json
    eras: Dict[str, EraResult]
    content: Optional[CheckpointFields]  # what kubelet restores (1.37: the data section)
    inline: Optional[CheckpointFields]
    irregularities: Tuple[str, ...]

    @property
    def accepted_by(self) -> Tuple[str, ...]:
        return tuple(era for era in ERAS if self.eras[era].accepted)

    @property
    def verified(self) -> bool:
        return bool(self.accepted_by)

    @property
    def releases_accepting(self) -> Tuple[str, ...]:
        return tuple(release for era in self.accepted_by for release in ERA_RELEASES[era])

    @property
    def releases_refusing(self) -> Tuple[str, ...]:
        return tuple(release for era in ERAS if not self.eras[era].accepted for release in ERA_RELEASES[era])

    def releases_disagree(self) -> str:
        """``""``, or which kubelet releases start with this file and which refuse it."""
        if not self.releases_accepting or not self.releases_refusing:
            return ""
        return "kubelet releases disagree about this file: %s accept it, %s refuse it" % (
            ", ".join(self.releases_accepting), ", ".join(self.releases_refusing))

    def write_layout(self, era: Optional[str] = None) -> Tuple[Optional[str], str]:
        """docs/safety.md: the layout a repair writes (legacy or v3), or None and why it must refuse. ``era``: the
        reader of the kubelet that will start, when it is known: only its reading counts (else every era's)."""
        why = self.unmodelled(era)
        return (None, why) if why else self.layout_for(era)

    def layout_for(self, era: Optional[str] = None) -> Tuple[Optional[str], str]:
        """The layout a repair writes as far as kubelet's readers go (:meth:`write_layout` without :meth:`unmodelled`):
        None when the kubelet that will start, or with ``era`` unknown some supported release, does not read it so."""
        return _layout_for_era(self, era) if era else _write_layout(self)

    def unmodelled(self, era: Optional[str] = None) -> Optional[str]:
        """Why a file kubelet loads is still never rewritten, or None: kubelet did not write it (unknown or repeated
        keys, null, non-canonical ids). Kubelet's decoder reads past them, so it matters only when the file must be
        rewritten: kubelet starts with an in-sync one as it is."""
        if self.irregularities:
            return "the file is not kubelet output: " + "; ".join(self.irregularities[:5])
        return None

    def content_at(self, era: Optional[str]) -> Optional[CheckpointFields]:
        """What kubelet of ``era`` restores: 1.37 the data section of a 1.37 file, an older kubelet the top level."""
        return self.content if era in (None, ERA_137) else self.inline


def _top_level_keys(tree: Any) -> Tuple[str, ...]:
    return tuple(fold_key(key) for key in tree.keys_in_order()) if isinstance(tree, JsonObject) else ()


def _shape(tree: Any) -> str:
    keys = _top_level_keys(tree)
    if "data" in keys or "datachecksum" in keys:
        return "v3"
    return "v2" if "podentries" in keys else "legacy"


def _empty_v3_part(inline: CheckpointFields) -> bool:
    """``"data":""`` and ``"dataChecksum":0``: 1.37 falls back to the V2/V1 part (``loadAndMigrateCheckpointV3``)."""
    return inline.data == "" and inline.data_checksum == 0


def _layout(shape: str, tree: Any, eras: Dict[str, EraResult], inline: CheckpointFields) -> str:
    if shape == "v3" and not _empty_v3_part(inline):
        return "v3" if eras[ERA_137].via == "v3" else "v3-broken"
    if inline.checksum == 0:
        return "zero"
    for via in ("legacy", "v1-name", "v2"):
        if any(result.via == via for result in eras.values()):
            return via
    return "unverified"


def _format_label(shape: str, layout: str, inline: CheckpointFields) -> str:
    if shape == "v3":
        return layout if layout in ("v3", "v3-broken") else "v3-empty-data"
    zero = "-zero-checksum" if inline.checksum == 0 else ""
    return ("v2" if shape == "v2" else "v1-legacy" if not zero else "v1") + zero


def _walk_irregularities(value: Any, path: str, known: Dict[str, Tuple[str, ...]], found: List[str]) -> None:
    if value is None:
        found.append("%s is null (kubelet never writes null)" % path)
    elif isinstance(value, JsonObject):
        keys = value.keys_in_order()
        seen: Dict[str, str] = {}
        allowed = known.get(_schema_of(path))
        for key in keys:
            if fold_key(key) in seen:
                found.append("%s repeats the key %r" % (path, key))
            seen[fold_key(key)] = key
            if not key.isascii():
                found.append("%s has the non-ASCII key %r" % (path, key))
            elif allowed is not None and key not in allowed:
                kind = "a case variant of a field" if fold_key(key) in map(fold_key, allowed) else "an unknown key"
                found.append("%s has %s %r" % (path, kind, key))
        for key, item in value:
            _walk_irregularities(item, "%s.%s" % (path, key), known, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _walk_irregularities(item, "%s[%d]" % (path, index), known, found)


def _schema_of(path: str) -> str:
    """Which struct an object at ``path`` is: top, node, table, block, pod-entry or a map."""
    parts = path.split(".")
    depth = len(parts)
    if depth == 1:
        return "top"
    section = parts[1]
    if section == "machineState":
        return {3: "node", 5: "table"}.get(depth, "map")
    if section == "podEntries" and depth == 3:
        return "pod-entry"
    if "[" in parts[-1]:
        return "block"
    return "map"


def _irregularities(tree: Any, top_keys: Tuple[str, ...], name: str) -> List[str]:
    known = {"top": top_keys, "node": NODE_KEYS, "table": TABLE_KEYS, "block": BLOCK_KEYS, "pod-entry": POD_ENTRY_KEYS}
    found: List[str] = []
    _walk_irregularities(tree, name, known, found)
    if isinstance(tree, JsonObject):
        for key, nodes in tree:
            if fold_key(key) == "machinestate" and isinstance(nodes, JsonObject):
                found.extend(
                    "%s.machineState has the non-canonical NUMA node id %r" % (name, node_id)
                    for node_id in nodes.keys_in_order()
                    if not (node_id.isascii() and node_id.isdigit()) or (node_id != "0" and node_id.startswith("0"))
                )
    else:
        found.append("%s is not a JSON object" % name)
    return found


def _content(shape: str, doc: ParsedDocument, eras: Dict[str, EraResult], inline: CheckpointFields) -> CheckpointFields:
    if eras[ERA_137].via == "v3":
        data_fields, _error = decode_fields(parse_document(inline.data.encode("utf-8")), DATA_KEYS)
        return data_fields
    if shape == "v2":
        return doc.decoded(V2_KEYS)[0]
    return inline


def inspect_checkpoint(raw: bytes) -> CheckpointReport:
    """Decode ``raw`` as every era would; never raises for bad content."""
    if len(raw) > MAX_CHECKPOINT_BYTES:
        error = "the file is %d bytes, more than the %d bytes any kubelet writes" % (len(raw), MAX_CHECKPOINT_BYTES)
        return _unreadable(len(raw), error, "too-large")
    try:
        tree = parse_document(raw)
    except GoJsonError as syntax:
        return _unreadable(len(raw), str(syntax), "not-json")
    shape = _shape(tree)
    doc = ParsedDocument(tree)
    eras = {era: read_as_era(doc, era) for era in ERAS}
    inline, _error = doc.decoded(V3_KEYS if shape == "v3" else V2_KEYS)
    layout = _layout(shape, tree, eras, inline)
    found = _irregularities(tree, V3_KEYS if shape == "v3" else V2_KEYS, "checkpoint")
    if eras[ERA_137].via == "v3":
        found += _irregularities(parse_document(inline.data.encode("utf-8")), DATA_KEYS, "data")
    return CheckpointReport(
        size=len(raw),
        syntax_error=None,
        shape=shape,
        layout=layout,
        format_label=_format_label(shape, layout, inline),
        eras=eras,
        content=_content(shape, doc, eras, inline),
        inline=inline,
        irregularities=tuple(found),
    )


def _unreadable(size: int, error: str, layout: str) -> CheckpointReport:
    return CheckpointReport(
        size=size,
        syntax_error=error,
        shape="not-json",
        layout=layout,
        format_label="not-json",
        eras={era: _reject(error) for era in ERAS},
        content=None,
        inline=None,
        irregularities=(),
    )


def _has_pod_entries(fields: Optional[CheckpointFields]) -> bool:
    return bool(fields is not None and fields.pod_entries)


def _inline_matches_data(report: CheckpointReport) -> bool:
    inline, content = report.inline, report.content
    return (
        inline is not None
        and content is not None
        and inline.checksum == legacy_checksum(inline)
        and (inline.policy_name, inline.machine_state, inline.entries)
        == (content.policy_name, content.machine_state, content.entries)
    )


def _write_layout(report: CheckpointReport) -> Tuple[Optional[str], str]:
    """A file the supported releases disagree about is never rewritten (whichever reading a repair
    kept, some release would start with a state other than the one it starts with today)."""
    layout, reason = _layout_to_write(report)
    disagreement = report.releases_disagree()
    if disagreement:
        detail = reason if layout is None else "a %s file" % report.layout
        return None, "%s; %s, so it is left as it is" % (detail, disagreement)
    return layout, reason


def _pod_entries(content: Optional[CheckpointFields]) -> Optional[str]:
    """Pod-level entries: whether kubelet starts with them is not modelled, so no verdict is given on them."""
    if _has_pod_entries(content):
        return "the checkpoint has pod-level entries (podEntries), whose validation this version does not model"
    return None


def _layout_for_era(report: CheckpointReport, era: str) -> Tuple[Optional[str], str]:
    """docs/safety.md: the layout a repair writes for the kubelet that will start, whose checkpoint reader is
    ``era``: the state that reader restores, in 1.37's layout when the file is one (both parts written from it),
    else in the legacy layout with a fresh legacy checksum, which every era reads (a zero checksum, a V1-name
    checksum or a damaged data part the starting kubelet reads past is replaced by one that verifies)."""
    result = report.eras[era]
    if not result.accepted:
        return None, "the kubelet that will start (%s) refuses the file: %s" % (", ".join(ERA_RELEASES[era]), result.error)
    why = _pod_entries(report.content_at(era))
    if why:
        return None, why
    if report.layout == "v3" and (era == ERA_137 or _inline_matches_data(report)):
        return "v3", "1.37 layout kept: legacy inline part plus data and dataChecksum, both from the state kubelet restores"
    return "legacy", "legacy layout with a fresh legacy checksum, read by kubelet %s (and by every era)" % ", ".join(ERA_RELEASES[era])


def _layout_to_write(report: CheckpointReport) -> Tuple[Optional[str], str]:
    if report.layout in ("not-json", "too-large", "unverified") or not report.verified:
        return None, "no kubelet era accepts the file: %s" % (report.syntax_error or CORRUPTED)
    if report.layout == "zero":
        return None, "the checksum is 0: the content is unauthenticated and legacy kubelets reject it"
    if report.layout == "v3-broken":
        return None, "the V3 data section does not load (%s); kubelet 1.37 refuses it" % report.eras[ERA_137].error
    why = _pod_entries(report.content)
    if why:
        return None, why
    if report.layout == "v3":
        if not _inline_matches_data(report):
            return None, "the V3 inline part does not verify or differs from the data section"
        return "v3", "1.37 layout kept: legacy inline part plus data and dataChecksum"
    return "legacy", "legacy layout with the legacy checksum, accepted by every kubelet era"
