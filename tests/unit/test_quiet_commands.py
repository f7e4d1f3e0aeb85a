# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The venv scripts/setup.sh makes (requirements.txt) runs ansible without a Python warning on every command."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BIN = os.path.dirname(sys.executable)


COMMANDS = [
    ["ansible-playbook", "--version"],
    ["ansible", "-i", "localhost,", "-c", "local", "-e", "ansible_python_interpreter=" + sys.executable, "-m", "ansible.builtin.ping", "localhost"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=["ansible-playbook", "ansible"])
def test_an_ansible_command_prints_no_python_warning(command) -> None:
    if not os.path.exists(os.path.join(BIN, command[0])):
        pytest.fail("%s is not in this venv (%s): run scripts/setup.sh" % (command[0], BIN))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1")
    env.pop("PYTHONWARNINGS", None)
    done = subprocess.run([os.path.join(BIN, command[0])] + command[1:], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    # cryptography 51 warns "CryptographyDeprecationWarning: DSA is deprecated" when ansible-core imports its DSA module.
    assert "Warning" not in done.stderr and "WARNING" not in done.stderr, done.stderr
