# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's manifest names exactly the engine files a module imports, by the digest of their bytes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils import _manifest

# Imports the module in a fresh interpreter and lists the engine files that import loaded.
IMPORTED = r'''
import importlib, json, sys
before = set(sys.modules)
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(name for name in set(sys.modules) - before if name.startswith(sys.argv[2]))))
'''


def imported_by(module: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    env.pop(_bytecode.ENVIRONMENT_VARIABLE, None)
    completed = subprocess.run([sys.executable, "-c", IMPORTED, _bytecode.MODULES + module, _bytecode.PACKAGE], env=env, check=True,
                               stdout=subprocess.PIPE, text=True)
    return json.loads(completed.stdout)


@pytest.mark.parametrize("module", ["numa_drift_facts", "kubelet_mm_checkpoint", "numa_drift_metrics"])
def test_the_manifest_lists_what_the_module_really_imports(module) -> None:
    entries = _manifest.module_manifest(module)
    assert entries[0][0] == _bytecode.MODULES + module
    listed = sorted(name for name, _digest in entries[1:])
    really = [name for name in imported_by(module) if name != _bytecode.__name__]
    assert listed == really


def test_the_digests_are_of_the_files_bytes() -> None:
    for name, digest in _manifest.module_manifest("numa_drift_facts"):
        relative = name[len(_bytecode.COLLECTION):].replace(".", "/") + ".py"
        with open(os.path.join(_manifest.PLUGINS_DIR, relative), "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == digest, name


def test_imports_are_read_in_both_forms_and_only_at_top_level() -> None:
    source = (
        "from ansible_collections.nodeops.numa_drift.plugins.module_utils._drift import probe\n"
        "from ansible_collections.nodeops.numa_drift.plugins.module_utils import _checkpoint as checkpoint, _yaml\n"
        "from ansible_collections.nodeops.numa_drift.plugins.module_utils._gojson import (\n    decode,\n)\n"
        "def later():\n    from ansible_collections.nodeops.numa_drift.plugins.module_utils._repair import repair_node\n"
        "from ansible.module_utils.basic import AnsibleModule\n"
    )
    assert _manifest.imported_engine_files(source) == ["_drift", "_gojson", "_checkpoint", "_yaml"]
