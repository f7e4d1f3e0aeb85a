# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline stand-in for pip's ``get-pip.py``, used by ansible-test's sanity virtual environments.

``ansible-test sanity --requirements`` creates one virtual environment per sanity test without
pip, then bootstraps pip with a ``get-pip.py`` it downloads from a host outside the package
registries (unreachable here), unless a copy is cached at
``~/.ansible/test/cache/get_pip_<version>.py``. ``scripts/test.sh`` puts this file there.

It does what ``get-pip.py`` does, with the same command line: bootstrap pip (from the
interpreter's bundled ``ensurepip`` wheel instead of an embedded copy), then
``pip install --upgrade --force-reinstall`` the requested packages (``pip==<version>``), plus
setuptools and wheel unless ``--no-setuptools`` / ``--no-wheel`` is given.
"""

from __future__ import annotations

import subprocess
import sys


def pip_install_arguments(argv: list[str]) -> list[str]:
    """Translate get-pip.py's command line into ``pip install`` arguments."""
    args = [arg for arg in argv if arg not in ("--no-setuptools", "--no-wheel")]
    if "--no-setuptools" not in argv:
        args.append("setuptools")
    if "--no-wheel" not in argv:
        args.append("wheel")
    return ["install", "--upgrade", "--force-reinstall"] + args


def main() -> int:
    """Bootstrap pip into the running interpreter's environment, then install what was asked."""
    bootstrap = subprocess.call([sys.executable, "-m", "ensurepip", "--default-pip"])
    if bootstrap != 0:
        return bootstrap
    return subprocess.call([sys.executable, "-m", "pip"] + pip_install_arguments(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
