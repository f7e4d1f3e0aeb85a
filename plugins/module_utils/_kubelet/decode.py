# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's decoding of a ``--config`` file and of the merged ``--config-dir`` drop-ins (:func:`dropins_error`), for
the fields of the CPU and topology managers: a value of the wrong JSON type is refused before anything else (pure,
stdlib only, Python >= 3.9).

``configfiles.fsLoader.Load`` decodes the file with kubelet's codec (pkg/kubelet/kubeletconfig/util/codec
``DecodeKubeletConfiguration``): the strict decoder first, then a lenient one, but only when the strict one failed
with a *strict* error (an unknown or duplicate field). A value of the wrong type is not one: ``encoding/json``'s
``UnmarshalTypeError`` is returned as ``failed to decode: json: cannot unmarshal bool into Go struct field
KubeletConfiguration.cpuManagerPolicyOptions of type string`` (a YAML ``true`` or ``1`` is JSON's bool or number
once sigs.k8s.io/yaml converts the file; ``cpuManagerPolicyOptions`` is ``map[string]string``). v1.34-v1.37 alike
(the kubelet judge reads it so at each). The decoder keeps the first such error: a JSON file (``{`` first,
``utilyaml.IsJSONBuffer``) is decoded in its own key order, a YAML file as ``YAMLToJSON`` re-writes it, keys sorted.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import go_json_kind

__all__ = ["STRING_FIELDS", "STRING_MAP_FIELDS", "type_error", "load_error", "merge_patch", "dropins_error"]

# v1beta1.KubeletConfiguration: the fields the CPU and topology managers are built from.
STRING_FIELDS = ("cpuManagerPolicy", "reservedSystemCPUs", "topologyManagerPolicy", "topologyManagerScope")
STRING_MAP_FIELDS = ("cpuManagerPolicyOptions", "topologyManagerPolicyOptions", "systemReserved", "kubeReserved")
CHECKED_FIELDS = STRING_FIELDS + STRING_MAP_FIELDS


def _field_error(name: str, value: Any) -> Optional[str]:
    """The field's ``UnmarshalTypeError``, or None (``null`` leaves a field as it is)."""
    if value is None:
        return None
    where = "Go struct field KubeletConfiguration.%s" % name
    if name in STRING_FIELDS:
        return None if isinstance(value, str) else "json: cannot unmarshal %s into %s of type string" % (go_json_kind(value), where)
    if not isinstance(value, Mapping):
        return "json: cannot unmarshal %s into %s of type map[string]string" % (go_json_kind(value), where)
    for item in value.values():
        if item is not None and not isinstance(item, str):
            return "json: cannot unmarshal %s into %s of type string" % (go_json_kind(item), where)
    return None


def type_error(document: Mapping[str, Any], json_file: bool) -> Optional[str]:
    """The first wrong type among the CPU and topology managers' fields, in the order kubelet's decoder meets them."""
    keys: Iterable[str] = document if json_file else sorted(document)
    for key in keys:
        if key in CHECKED_FIELDS:
            problem = _field_error(key, document[key])
            if problem:
                return problem
    return None


def load_error(path: str, inner: str) -> str:
    """cmd/kubelet/app/server.go: ``loadConfigFile``'s wrapping (``filepath.Abs`` of the path), then the command's."""
    return "failed to load kubelet config file, path: %s, error: failed to load Kubelet config file %s, error failed to decode: %s" % (
        path, path, inner)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386's JSON merge patch of ``patch`` over ``target`` (``jsonpatch.MergePatch``): an object patches an object
    key by key, ``null`` removes a key, anything else replaces the value."""
    if not isinstance(patch, Mapping):
        return patch
    merged = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def dropins_error(documents: Sequence[Mapping[str, Any]]) -> Optional[str]:
    """cmd/kubelet/app/server.go ``mergeKubeletConfigurations``: each ``--config-dir`` drop-in (decoded as it is, no
    type checked) merge-patched over the configuration in turn, then the merged JSON decoded into
    ``v1beta1.KubeletConfiguration`` (``json.Marshal`` of the merged map: keys sorted). The configuration under the
    drop-ins has the right types, so only the drop-ins' own values can be wrong; a later drop-in may replace or remove
    (``null``) one. Kubelet's refusal, wrapped as the command wraps it, or None."""
    merged: Mapping[str, Any] = {}
    for document in documents:
        merged = merge_patch(merged, {key: value for key, value in document.items() if key in CHECKED_FIELDS})
    inner = type_error(merged, False)
    return "failed to merge kubelet configs: failed to unmarshal merged JSON into kubelet configuration: " + inner if inner else None
