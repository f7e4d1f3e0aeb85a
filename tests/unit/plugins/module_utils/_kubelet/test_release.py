# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/release.py: the release of the kubelet that will start, read from the
program the node's service runs (or MicroK8s' snap), an operator's option, and the releases outside the tested ones."""

from __future__ import annotations

import os
import signal
import time

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common import node_files
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.config import load_kubelet_settings
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.release import (
    SUPPORTED_RELEASES,
    UNKNOWN,
    KubeletRelease,
    ReleaseOptionError,
    from_option,
    parse_release,
    rules_release,
    split_releases,
)
from ansible_collections.nodeops.numa_drift.tests.support.distributions import LAYOUTS, VERSIONS, drifted_node, released_node
from ansible_collections.nodeops.numa_drift.tests.support.programs import PROGRAMS, install_program, said, version_script


@pytest.mark.parametrize("said_version, tested", [
    ("Kubernetes v1.34.4", True), ("k3s version v1.36.3+k3s1 (abc1234)", True), ("rke2 version v1.35.4+rke2r1", True),
    ("Kubernetes v1.37.0-rc.1", False), ("Kubernetes v1.37.0-alpha.0", False), ("k3s version v1.36.0-rc1+k3s1", False),
    ("Kubernetes v1.38.0", False),
])
def test_a_pre_release_of_a_tested_release_is_not_tested(said_version, tested):
    # Semver's "-" suffix is a pre-release (cut before the release's code was final); a distribution's "+" is a build.
    version, release = parse_release(said_version)
    assert KubeletRelease(version, release, "said").tested is tested


@pytest.mark.parametrize("text, expected", [
    ("Kubernetes v1.34.4", ("v1.34.4", "1.34")),
    ("k3s version v1.35.4+k3s1 (6b8e1f9c)", ("v1.35.4+k3s1", "1.35")),
    ("rke2 version v1.36.3+rke2r1 (2a1c5d7e)", ("v1.36.3+rke2r1", "1.36")),
    ("v1.37.2+k0s.0", ("v1.37.2+k0s.0", "1.37")),
    ("Kubernetes v1.38.0-alpha.1", ("v1.38.0-alpha.1", "1.38")),
    ("Kubernetes v0.0.0-master+$Format:%H$", ("v0.0.0-master+", "0.0")),
    ("no version here", None),
    ("", None),
])
def test_parse_release_reads_what_each_program_prints(text, expected):
    assert parse_release(text) == expected


@pytest.mark.parametrize("option, version, release", [
    ("1.34", None, "1.34"), ("v1.35.4", "v1.35.4", "1.35"), ("1.37.2", "v1.37.2", "1.37"), (" 1.36 ", None, "1.36"),
])
def test_an_operators_release_wins_and_says_so(option, version, release):
    assert from_option(option) == KubeletRelease(version, release, "option kubelet_release")


@pytest.mark.parametrize("option", ["banana", "1", "1.34.x", "v1.34.4 extra", "latest", "1.34;rm"])
def test_an_option_that_names_no_release_is_a_clear_error(option):
    with pytest.raises(ReleaseOptionError, match="kubelet_release: .* is not a kubelet release such as 1.34 or v1.34.4"):
        from_option(option)


def test_split_releases_orders_by_number_not_text():
    assert split_releases("1.36") == (("1.34", "1.35"), ("1.36", "1.37"))
    assert split_releases("1.4", ("1.3", "1.10", "1.4")) == (("1.3",), ("1.10", "1.4"))


@pytest.mark.parametrize("version, untested, judged", [
    ("v1.34.4", "refuse", "1.34"), ("v1.37.2", "nearest", "1.37"),
    ("v1.38.0", "refuse", None), ("v1.33.4", "refuse", None),
    ("v1.38.0", "nearest", "1.37"), ("v1.33.4", "nearest", "1.34"), ("v1.40.1", "nearest", "1.37"),
])
def test_the_rules_of_a_release_outside_the_tested_ones(version, untested, judged):
    judged_at = rules_release(from_option(version), untested)
    assert judged_at.release == judged
    if judged and version[1:5] not in SUPPORTED_RELEASES:
        assert "nearest to kubelet %s" % version in judged_at.source
    assert rules_release(UNKNOWN, untested) == UNKNOWN


# --- read from the node ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_distribution_says_its_release_through_the_program_its_service_runs(tmp_path, layout):
    version = VERSIONS[sorted(LAYOUTS).index(layout) % len(VERSIONS)]
    root = released_node(tmp_path, layout, version)
    settings = load_kubelet_settings(HostFiles(root))
    assert settings.release.release == version[1:5]
    assert settings.release.version.startswith(version)
    assert settings.rules_release == settings.release
    if layout == "microk8s":
        assert settings.release.source == "/snap/microk8s/current/meta/snap.yaml: version %s" % version
    else:
        program = PROGRAMS[layout]
        asked = "version" if program.endswith("/k0s") else "--version"
        assert settings.release.source == "%s %s: %s" % (program, asked, said(program, version).splitlines()[0])


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_without_its_program_the_release_is_unknown_and_says_why(tmp_path, layout):
    root = drifted_node(tmp_path, LAYOUTS[layout][0], LAYOUTS[layout][3])
    settings = load_kubelet_settings(HostFiles(root))
    assert settings.release.known is False and settings.rules_release.known is False
    if layout == "microk8s":
        assert settings.release.source.startswith("unknown: ") and "/snap/microk8s/current/meta/snap.yaml" in settings.release.source
    else:
        assert settings.release.source == "unknown: %s: No such file or directory" % os.path.join(root, PROGRAMS[layout].lstrip("/"))


def test_a_program_that_says_no_release_leaves_it_unknown_with_what_it_said(tmp_path):
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    install_program(root, "/usr/local/bin/kubelet", version_script("Kubernetes v0.0.0-master\n", rc=3))
    release = load_kubelet_settings(HostFiles(root)).release
    assert release == KubeletRelease(None, None, "unknown: /usr/local/bin/kubelet --version said 'Kubernetes v0.0.0-master' (exit status 3)")


def test_the_program_is_followed_through_links_as_systemd_runs_it_and_under_a_root(tmp_path):
    # Kubespray-like: /usr/local/bin/kubelet -> /opt/kubelet/v1.35.4/kubelet, absolute, resolved under the root.
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    install_program(root, "/opt/kubelet/v1.35.4/kubelet", version_script(said("kubelet", "v1.35.4")))
    os.makedirs(os.path.join(root, "usr/local/bin"), exist_ok=True)
    os.symlink("/opt/kubelet/v1.35.4/kubelet", os.path.join(root, "usr/local/bin/kubelet"))
    assert load_kubelet_settings(HostFiles(root)).release.version == "v1.35.4"


def test_openshift_asks_the_kubelet_kubenswrapper_runs_not_the_wrapper(tmp_path):
    root = drifted_node(tmp_path, LAYOUTS["openshift"][0])
    marker = str(tmp_path / "wrapper-ran")
    install_program(root, "/usr/local/bin/kubenswrapper", version_script("wrapper 1.0\n", marker=marker))
    install_program(root, "/usr/bin/kubelet", version_script(said("kubelet", "v1.37.2")))
    assert load_kubelet_settings(HostFiles(root)).release.version == "v1.37.2"
    assert not os.path.exists(marker)


def test_a_program_not_named_as_one_that_runs_kubelet_is_never_run(tmp_path):
    # A site's wrapper script might start kubelet whatever its arguments: it is not asked anything.
    files = dict(LAYOUTS["kubespray"][0])
    files["/etc/systemd/system/kubelet.service"] = files["/etc/systemd/system/kubelet.service"].replace(
        "/usr/local/bin/kubelet", "/usr/local/bin/start-kubelet.sh")
    root = drifted_node(tmp_path, files)
    marker = str(tmp_path / "wrapper-ran")
    install_program(root, "/usr/local/bin/start-kubelet.sh", version_script(said("kubelet", "v1.34.4"), marker=marker))
    release = load_kubelet_settings(HostFiles(root)).release
    assert not os.path.exists(marker)
    assert release.known is False
    assert release.source.startswith("unknown: /usr/local/bin/start-kubelet.sh is not run: only k0s, k3s, kubelet, kubelite, rke2 are asked")


def assert_ended(pid):
    """Process ``pid`` is gone within 5 s (killed with the program's session)."""
    deadline = time.monotonic() + 5
    while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists("/proc/%d" % pid), "the program's child outlived the time limit"


def test_a_program_that_hangs_is_killed_with_its_children_and_the_release_is_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(node_files, "VERSION_SECONDS", 0.5)
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    pids = tmp_path / "pids"
    install_program(root, "/usr/local/bin/kubelet", "#!/bin/sh\nsleep 60 &\necho $! > '%s'\nwait\n" % pids)
    started = time.monotonic()
    release = load_kubelet_settings(HostFiles(root)).release
    assert time.monotonic() - started < 10
    assert release.known is False and "did not answer within 0.5 s" in release.source
    assert_ended(int(pids.read_text()))


def test_a_program_that_never_stops_talking_is_read_only_so_far_and_its_release_is_unknown(tmp_path):
    # 64 KiB of its output are read; closing the pipe ends it (SIGPIPE at its default, as subprocess gives it).
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    install_program(root, "/usr/local/bin/kubelet", "#!/bin/sh\nexec yes 'Kubernetes v1.34.4'\n")
    started = time.monotonic()
    found = HostFiles(root).program_version("/usr/local/bin/kubelet")
    assert time.monotonic() - started < 10
    assert (found["output"], found["rc"]) == ("Kubernetes v1.34.4", -signal.SIGPIPE)
    release = load_kubelet_settings(HostFiles(root)).release
    assert release.known is False
    assert release.source == "unknown: /usr/local/bin/kubelet --version said 'Kubernetes v1.34.4' (exit status %d)" % -signal.SIGPIPE


def test_a_program_that_exits_while_its_child_holds_the_output_open_is_stopped_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(node_files, "VERSION_SECONDS", 0.5)
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    pids = tmp_path / "pids"
    install_program(root, "/usr/local/bin/kubelet", "#!/bin/sh\necho 'Kubernetes v1.34.4'\nsleep 60 &\necho $! > '%s'\n" % pids)
    release = load_kubelet_settings(HostFiles(root)).release
    assert release.known is False and "did not answer within 0.5 s" in release.source
    assert_ended(int(pids.read_text()))


def test_a_wait_stopped_from_outside_stops_the_program_too(tmp_path, monkeypatch):
    # The boot guard probes under an alarm shorter than VERSION_SECONDS: its timeout must not leave kubelet --version
    # running in a session of its own (in kubelet.service's cgroup).
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    pids = tmp_path / "pids"
    install_program(root, "/usr/local/bin/kubelet", "#!/bin/sh\necho $$ > '%s'\nexec sleep 60\n" % pids)

    def alarm(handle, deadline):
        while not pids.exists() or not pids.read_text().strip():
            time.sleep(0.01)
        raise TimeoutError("the guard's alarm")

    monkeypatch.setattr(node_files, "_output_until", alarm)
    with pytest.raises(TimeoutError):
        HostFiles(root).program_version("/usr/local/bin/kubelet")
    assert not os.path.exists("/proc/%d" % int(pids.read_text())), "the program outlived the wait"


def test_a_reader_that_ignores_sigchld_still_hears_the_release(tmp_path):
    # With SIGCHLD ignored the kernel reaps the child and waitpid says ECHILD: the output is what counts, as with
    # subprocess.
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    install_program(root, "/usr/local/bin/kubelet", version_script(said("kubelet", "v1.35.4")))
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        found = HostFiles(root).program_version("/usr/local/bin/kubelet")
    finally:
        signal.signal(signal.SIGCHLD, before)
    assert (found["output"], found["rc"]) == ("Kubernetes v1.35.4", 0)


def test_the_program_runs_with_no_input_and_a_minimal_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", "/root/.kube/config")
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    seen = tmp_path / "seen"
    install_program(root, "/usr/local/bin/kubelet", "#!/bin/sh\nenv > '%s'\ncat >> '%s'\necho 'Kubernetes v1.36.3'\n" % (seen, seen))
    assert load_kubelet_settings(HostFiles(root)).release.version == "v1.36.3"
    environment = dict(line.split("=", 1) for line in seen.read_text().splitlines() if "=" in line)
    assert "KUBECONFIG" not in environment and environment["PATH"] == "/usr/sbin:/usr/bin:/sbin:/bin"
    assert (environment["GOGC"], environment["GOMAXPROCS"]) == ("off", "1")


def test_an_operators_release_is_used_and_no_program_is_run(tmp_path):
    root = drifted_node(tmp_path, LAYOUTS["kubespray"][0])
    marker = str(tmp_path / "ran")
    install_program(root, "/usr/local/bin/kubelet", version_script(said("kubelet", "v1.34.4"), marker=marker))
    settings = load_kubelet_settings(HostFiles(root), kubelet_release="v1.37.2")
    assert settings.release == KubeletRelease("v1.37.2", "1.37", "option kubelet_release")
    assert not os.path.exists(marker)


def test_kubeadm_without_a_unit_asks_usr_bin_kubelet(tmp_path):
    root = drifted_node(tmp_path, {"/var/lib/kubelet/config.yaml": LAYOUTS["kubespray"][0]["/etc/kubernetes/kubelet-config.yaml"]})
    assert load_kubelet_settings(HostFiles(root)).release.source.startswith("unknown: no program that runs kubelet was found")
    install_program(root, "/usr/bin/kubelet", version_script(said("kubelet", "v1.35.4")))
    assert load_kubelet_settings(HostFiles(root)).release.version == "v1.35.4"
