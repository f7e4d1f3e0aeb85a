# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.__guard_program: build the boot guard zipapp, install it on the node.

The program is built on the controller, at every run, from this collection's own
``plugins/module_utils/**/*.py`` (no second copy of the engine exists anywhere): a zip with
fixed timestamps, in name order, behind ``#!/usr/bin/env python3``, so the same collection
always gives the same bytes and ``ansible.builtin.copy`` reports ``changed`` only when they differ.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import zipfile
from typing import Any, Dict, List, Optional

from ansible.plugins.action import ActionBase

from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard import program as _guard

SHEBANG = b"#!/usr/bin/env python3\n"
PACKAGE = "ansible_collections/nodeops/numa_drift/plugins/module_utils"
MAIN = (
    "# numa-drift-guard: built by nodeops.numa_drift.__guard_program from the collection's module_utils\n"
    "import sys\n"
    "from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard.program import main\n"
    "sys.exit(main())\n"
)
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
ARGUMENT_SPEC = {"dest": {"type": "path", "default": _guard.PROGRAM}}


def module_utils_dir() -> str:
    """``plugins/module_utils`` (the guard program is ``module_utils/_guard/program.py``)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(_guard.__file__)))


def engine_files(source_dir: str) -> List[str]:
    """Every ``.py`` file under ``source_dir``, subpackages included, as sorted ``/``-separated relative paths."""
    found = []
    for top, dirs, files in os.walk(source_dir):
        dirs[:] = [name for name in dirs if name != "__pycache__"]
        relative = os.path.relpath(top, source_dir)
        for name in files:
            if name.endswith(".py") and not (relative == "." and name == "__init__.py"):
                found.append(name if relative == "." else "%s/%s" % (relative.replace(os.sep, "/"), name))
    return sorted(found)


def _add(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, _FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def build_zipapp(source_dir: Optional[str] = None) -> bytes:
    """The executable bytes: shebang + a zip of the engine's modules and ``__main__.py``."""
    source_dir = source_dir or module_utils_dir()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        _add(archive, "__main__.py", MAIN.encode("utf-8"))
        parts = PACKAGE.split("/")
        for depth in range(1, len(parts) + 1):
            _add(archive, "/".join(parts[:depth]) + "/__init__.py", b"")
        for name in engine_files(source_dir):
            with open(os.path.join(source_dir, *name.split("/")), "rb") as handle:
                _add(archive, "%s/%s" % (PACKAGE, name), handle.read())
    return SHEBANG + buffer.getvalue()


class ActionModule(ActionBase):
    """Builds the program on the controller and copies it to ``dest`` (mode 0755) with ansible.builtin.copy."""

    TRANSFERS_FILES = True

    def run(self, tmp: Optional[str] = None, task_vars: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        result = super().run(tmp, task_vars)
        _spec, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        staging = tempfile.mkdtemp(prefix="numa-drift-guard-")
        try:
            source = os.path.join(staging, "numa-drift-guard")
            with open(source, "wb") as handle:
                handle.write(build_zipapp())
            copy_task = self._task.copy()
            copy_task.args = {"src": source, "dest": args["dest"], "mode": "0755"}
            copy_action = self._shared_loader_obj.action_loader.get(
                "ansible.legacy.copy", task=copy_task, connection=self._connection, play_context=self._play_context,
                loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
            result.update(copy_action.run(task_vars=task_vars))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return result
