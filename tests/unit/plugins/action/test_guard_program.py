# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guard zipapp built from the collection's module_utils, run by plain interpreters without Ansible."""

from __future__ import annotations

import glob
import io
import json
import os
import subprocess
import zipfile

import pytest

from ansible_collections.nodeops.numa_drift.plugins.action import __guard_program as guard_program
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    checkpoint_file,
    guaranteed_pods,
    two_node_boot,
    write_kubelet_node,
)


def interpreters():
    found = {}
    pyenv = os.path.expanduser("~/.pyenv/versions")
    for minor in ("3.9", "3.11", "3.12", "3.13"):
        for path in sorted(glob.glob(os.path.join(pyenv, minor + ".*", "bin", "python" + minor))):
            found[minor] = path
    if os.access("/usr/bin/python3", os.X_OK):
        found["system"] = "/usr/bin/python3"
    return found


def test_build_is_reproducible_and_holds_every_engine_module():
    first, second = guard_program.build_zipapp(), guard_program.build_zipapp()
    assert first == second and first.startswith(b"#!/usr/bin/env python3\n")
    names = zipfile.ZipFile(io.BytesIO(first)).namelist()
    source = guard_program.module_utils_dir()
    engine = sorted(os.path.relpath(os.path.join(top, n), source).replace(os.sep, "/")
                    for top, _dirs, files in os.walk(source) if "__pycache__" not in top for n in files if n.endswith(".py"))
    engine = [name for name in engine if name != "__init__.py"]
    assert "__main__.py" in names
    assert "_guard/program.py" in engine and "_policy/drift.py" in engine  # subpackages are walked
    shipped = sorted(n[len(guard_program.PACKAGE) + 1:] for n in names if n.startswith(guard_program.PACKAGE + "/"))
    assert shipped == ["__init__.py"] + engine


@pytest.mark.parametrize("version", sorted(interpreters()))
def test_program_runs_with_a_plain_interpreter(tmp_path, version):
    program = tmp_path / "numa-drift-guard"
    program.write_bytes(guard_program.build_zipapp())
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)))
    with open(checkpoint_file(root), "rb") as handle:
        original = handle.read()
    # -I: isolated (no site-packages, no PYTHONPATH): nothing of Ansible is importable.
    done = subprocess.run([interpreters()[version], "-I", str(program), "--root", root], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "action repaired" in done.stderr
    with open(checkpoint_file(root), "rb") as handle:
        assert handle.read() != original
    with open(os.path.join(root, "var/lib/nodeops-numa-drift/guard.json"), encoding="utf-8") as handle:
        assert json.load(handle)["action"] == "repaired"
