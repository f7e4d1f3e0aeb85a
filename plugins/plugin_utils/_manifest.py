# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a module of this collection imports from its engine, by the SHA-256 of each file (controller side).

The manifest lets ``nodeops.numa_drift.__cached_run`` run the module from the node's bytecode
cache (``module_utils/_bytecode.py``) without the engine's source: a module and the engine files
its top-level imports reach, transitively, each named with the digest of the exact bytes
AnsiballZ would send. Only top-level imports count (an engine file imported later, inside a
function, is not in the manifest: the node then reports a miss and the full module runs).
"""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode

PLUGINS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGE = _bytecode.PACKAGE.rstrip(".")
BYTECODE = _bytecode.__name__.rsplit(".", 1)[1]
# `from <package>._x import ...` and `from <package> import _x[ as y], _z` at the start of a line.
_FROM_SUBMODULE = re.compile(r"^from %s\.(\w+) import " % re.escape(_PACKAGE), re.MULTILINE)
_FROM_PACKAGE = re.compile(r"^from %s import ([\w ,]+)$" % re.escape(_PACKAGE), re.MULTILINE)


def imported_engine_files(source: str) -> List[str]:
    """The engine modules (``_drift``, ...) one file's top-level imports name."""
    names = _FROM_SUBMODULE.findall(source)
    for group in _FROM_PACKAGE.findall(source):
        names.extend(part.split(" as ")[0].strip() for part in group.split(","))
    return names


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def module_manifest(module: str, plugins_dir: Optional[str] = None) -> List[Tuple[str, str]]:
    """(module name, source digest) of ``plugins/modules/<module>.py`` first, then every engine file it reaches."""
    plugins_dir = plugins_dir or PLUGINS_DIR
    source = _read(os.path.join(plugins_dir, "modules", module + ".py"))
    entries = [(_bytecode.MODULES + module, _bytecode.source_digest(source))]
    seen: Dict[str, bool] = {BYTECODE: True}  # the cache itself: cached_run ships and imports it
    pending = imported_engine_files(source.decode("utf-8"))
    while pending:
        name = pending.pop(0)
        if name in seen:
            continue
        seen[name] = True
        data = _read(os.path.join(plugins_dir, "module_utils", name + ".py"))
        entries.append((_bytecode.PACKAGE + name, _bytecode.source_digest(data)))
        pending.extend(imported_engine_files(data.decode("utf-8")))
    return entries
