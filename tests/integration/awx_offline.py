# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The awx.awx collection, offline: its modules check their parameters against their own argument specs and report
them, without a controller (tests/integration/test_awx_configure.py).

Galaxy is out of reach here; the collection comes from PyPI's ``ansible`` package, whose 13.x releases are the last
that bundle awx.awx (24.6.1 in 13.8.0). The wheel is downloaded once with pip and only ``ansible_collections/awx/awx``
is kept, under ~/.cache/nodeops-numa-drift/awx-collection. The offline copy is the collection as it is, with one
class added at the end of its ``module_utils/controller_api.py``: ``ControllerAPIModule`` (every module's first call)
builds the module with the module's own argument spec, mutually exclusive and required-if rules (ansible-core's
``AnsibleModule``: unknown options, types, choices and requirements fail as they would against a controller) and
then exits with the parameters it would have sent, as ``offline_params``.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

ANSIBLE_RELEASE = "13.8.0"
AWX_PREFIX = "ansible_collections/awx/awx/"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "nodeops-numa-drift", "awx-collection", "ansible-" + ANSIBLE_RELEASE)

OFFLINE_CLASS = '''

# ---- nodeops.numa_drift tests (tests/integration/awx_offline.py): offline, no controller. The module's parameters
# are checked against its own argument spec by AnsibleModule, then reported instead of sent.
class ControllerAPIModule(ControllerAPIModule):  # noqa: F811
    def __init__(self, argument_spec, direct_params=None, error_callback=None, warn_callback=None, **kwargs):
        full_argspec = dict(ControllerModule.AUTH_ARGSPEC)
        full_argspec.update(argument_spec)
        kwargs['supports_check_mode'] = True
        AnsibleModule.__init__(self, argument_spec=full_argspec, **kwargs)
        self.exit_json(changed=False, offline_params=self.params)
'''


def collection() -> str:
    """A collections directory holding awx.awx as PyPI's ansible package ships it (downloaded once)."""
    marker = os.path.join(CACHE, AWX_PREFIX, "MANIFEST.json")
    if not os.path.exists(marker):
        with tempfile.TemporaryDirectory() as download:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", download, "ansible==" + ANSIBLE_RELEASE],
                check=True, timeout=600,
            )
            wheel, = glob.glob(os.path.join(download, "ansible-*.whl"))
            staging = CACHE + ".partial"
            shutil.rmtree(staging, ignore_errors=True)
            with zipfile.ZipFile(wheel) as archive:
                for name in archive.namelist():
                    if name.startswith(AWX_PREFIX):
                        archive.extract(name, staging)
            shutil.rmtree(CACHE, ignore_errors=True)
            os.rename(staging, CACHE)
    return CACHE


def offline_collection(directory: str) -> str:
    """A collections directory under ``directory`` with the offline copy of awx.awx."""
    target = os.path.join(directory, "ansible_collections", "awx", "awx")
    shutil.copytree(os.path.join(collection(), AWX_PREFIX), target)
    with open(os.path.join(target, "plugins", "module_utils", "controller_api.py"), "a", encoding="utf-8") as handle:
        handle.write(OFFLINE_CLASS)
    return directory


if __name__ == "__main__":
    # scripts/test.sh's lint stage: the collections directory that holds awx.awx (awx/configure.yml's modules).
    print(collection())
