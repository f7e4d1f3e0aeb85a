# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host-tool installers (tests/integration/requirements.sh, tests/vm/requirements.sh) and
their shared body (tests/apt-requirements.sh), run as scripts against a PATH of stand-in
commands: what each reports as missing, its exit status and messages, and the apt-get calls it
makes. Nothing is installed: apt-get, id and dpkg-query are stand-ins that record their calls, and
the lock the installs queue on is the test's own file.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INTEGRATION = os.path.join(TESTS, "integration", "requirements.sh")
VM = os.path.join(TESTS, "vm", "requirements.sh")
BASH = shutil.which("bash")

INTEGRATION_COMMANDS = ("strace", "prometheus", "promtool", "prometheus-node-exporter", "chromium",
                        "podman", "runc", "etcd", "debootstrap")
VM_COMMANDS = ("qemu-system-x86_64", "qemu-img", "debootstrap", "mkfs.ext4", "ssh", "ssh-keygen",
               "systemd-nspawn", "flock", "etcd")


def stub(bindir, name, body):
    path = os.path.join(bindir, name)
    if os.path.lexists(path):
        os.remove(path)  # replace a link, never write through it
    with open(path, "w") as f:
        f.write("#!/bin/sh\n%s\n" % body)
    os.chmod(path, stat.S_IRWXU)


@pytest.fixture
def bindir(tmp_path):
    """A PATH holding only what the scripts themselves need; commands are added per test."""
    d = tmp_path / "bin"
    d.mkdir()
    for tool in ("sort", "grep", "readlink", "dirname", "flock"):
        os.symlink(shutil.which(tool), str(d / tool))
    stub(str(d), "id", 'echo "${FAKE_UID:-0}"')
    return str(d)


def run(script, bindir, tmp_path, *args, uid=0):
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {"PATH": bindir, "CALLS": str(log), "FAKE_UID": str(uid),
           "NUMA_DRIFT_APT_LOCK": str(tmp_path / "apt.lock")}
    proc = subprocess.run([BASH, script] + list(args), env=env, cwd=str(tmp_path),
                          capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout, proc.stderr, log.read_text().splitlines()


def test_integration_check_names_the_missing_packages_once(bindir, tmp_path):
    for name in ("strace", "chromium", "runc", "promtool"):
        stub(bindir, name, "exit 0")
    # prometheus is missing but promtool is there: the package is still named, once.
    assert run(INTEGRATION, bindir, tmp_path, "--check") == (
        1, "test-requirements: missing packages: debootstrap etcd-server podman prometheus prometheus-node-exporter\n",
        "", [])


def test_integration_all_present(bindir, tmp_path):
    for name in INTEGRATION_COMMANDS:
        stub(bindir, name, "exit 0")
    stub(bindir, "apt-get", 'echo "apt-get $*" >>"$CALLS"')
    for args in (("--check",), ()):
        assert run(INTEGRATION, bindir, tmp_path, *args) == (0, "test-requirements: all present\n", "", [])


def test_integration_installs_what_is_missing(bindir, tmp_path):
    for name in INTEGRATION_COMMANDS[:-1]:
        stub(bindir, name, "exit 0")
    stub(bindir, "apt-get", 'echo "apt-get $* DEBIAN_FRONTEND=$DEBIAN_FRONTEND" >>"$CALLS"')
    assert run(INTEGRATION, bindir, tmp_path) == (
        0, "test-requirements: installing debootstrap\ntest-requirements: installed debootstrap\n", "",
        ["apt-get update -q DEBIAN_FRONTEND=noninteractive",
         "apt-get install -y -q --no-install-recommends debootstrap DEBIAN_FRONTEND=noninteractive"])


def test_integration_apt_get_failure_is_the_exit_status(bindir, tmp_path):
    stub(bindir, "apt-get", 'echo "apt-get $1" >>"$CALLS"; [ "$1" != install ] || exit 100')
    rc, out, err, calls = run(INTEGRATION, bindir, tmp_path)
    assert (rc, calls) == (100, ["apt-get update", "apt-get install"])
    assert out.startswith("test-requirements: installing chromium debootstrap ")
    assert "installed" not in out
    assert err.startswith("test-requirements: apt-get failed to install chromium debootstrap ")


def test_integration_cannot_install(bindir, tmp_path):
    missing = "chromium debootstrap etcd-server podman prometheus prometheus-node-exporter runc strace"
    assert run(INTEGRATION, bindir, tmp_path) == (
        1, "", "test-requirements: missing %s and no apt-get here\n" % missing, [])
    stub(bindir, "apt-get", 'echo "apt-get $*" >>"$CALLS"')
    assert run(INTEGRATION, bindir, tmp_path, uid=1000) == (
        1, "", "test-requirements: missing %s; installing them needs root\n" % missing, [])


def test_vm_check_and_install(bindir, tmp_path):
    for name in ("qemu-img", "ssh", "mkfs.ext4"):
        stub(bindir, name, "exit 0")
    stub(bindir, "apt-get", 'echo "apt-get $*" >>"$CALLS"')
    missing = "debootstrap etcd-server openssh-client qemu-system-x86 systemd-container"
    assert run(VM, bindir, tmp_path, "--check") == (1, "vm-requirements: missing packages: %s\n" % missing, "", [])
    assert run(VM, bindir, tmp_path) == (
        0, "vm-requirements: installing %s\nvm-requirements: installed %s\n" % (missing, missing), "",
        ["apt-get update -q", "apt-get install -y -q --no-install-recommends %s" % missing])


@pytest.mark.parametrize("dpkg, missing", [
    (None, False),  # no dpkg here: only the commands are checked
    ('echo "install ok installed"', False),
    ('echo "unknown ok not-installed"', True),
    ("exit 1", True),  # dpkg does not know the package
])
def test_vm_needs_the_qemu_package_itself(bindir, tmp_path, dpkg, missing):
    # Every command is there; qemu-system-x86 must still be installed as a package (its firmware).
    for name in VM_COMMANDS:
        stub(bindir, name, "exit 0")
    if dpkg is not None:
        stub(bindir, "dpkg-query", '{ printf "dpkg-query"; printf " [%%s]" "$@"; echo; } >>"$CALLS"; %s' % dpkg)
    rc, out, err, calls = run(VM, bindir, tmp_path, "--check")
    if missing:
        assert (rc, out, err) == (1, "vm-requirements: missing packages: qemu-system-x86\n", "")
    else:
        assert (rc, out, err) == (0, "vm-requirements: all present\n", "")
    assert calls == ([] if dpkg is None else ["dpkg-query [-W] [-f=${Status}\\n] [qemu-system-x86]"])


def test_scripts_run_from_any_directory_and_through_a_symlink(bindir, tmp_path):
    for name in VM_COMMANDS:
        stub(bindir, name, "exit 0")
    link = tmp_path / "vm-requirements.sh"
    os.symlink(VM, str(link))
    assert run(str(link), bindir, tmp_path, "--check")[:2] == (0, "vm-requirements: all present\n")
    proc = subprocess.run([BASH, "requirements.sh", "--check"], env={"PATH": bindir, "FAKE_UID": "0"},
                          cwd=os.path.dirname(VM), capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "vm-requirements: all present\n", "")
