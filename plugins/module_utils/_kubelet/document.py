# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A KubeletConfiguration document (a ``--config`` file or a ``--config-dir`` drop-in) as a mapping.

Pure, stdlib only, Python >= 3.9: JSON first, else YAML as sigs.k8s.io/yaml reads it (``_golang.goyaml``,
imported only for a file that is not JSON).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import load_json

__all__ = [
    "parse_kubelet_config",
]


def parse_kubelet_config(text: str, require_kind: bool = False) -> Tuple[Optional[Dict[str, Any]], List[str]]:
    """A KubeletConfiguration document (JSON, else YAML as sigs.k8s.io/yaml reads it) as a mapping, or problems."""
    text = text.lstrip("\ufeff")
    try:
        document = load_json(text)
    except ValueError:
        # The YAML reader is imported only for a file that is not JSON (kubelet-config.json nodes never need it).
        from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load_mapping  # pylint: disable=import-outside-toplevel

        document, problem = load_mapping(text, "KubeletConfiguration mapping")
        if problem:
            return None, [problem]
    if document is None:
        return {}, []
    if not isinstance(document, dict):
        return None, ["the document is %s, not a KubeletConfiguration mapping" % kind_of(document)]
    kind = document.get("kind")
    if kind is not None and kind != "KubeletConfiguration":
        return None, ["the document is a %r, not a KubeletConfiguration" % (kind,)]
    if require_kind and (kind is None or document.get("apiVersion") is None):
        # A drop-in is decoded by kubelet's codec, which needs both (kubelet-config-file docs).
        return None, ["a drop-in must set apiVersion and kind: KubeletConfiguration"]
    return document, []
