# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``_node.plan_reader`` (what the node reader runs): what it records of a node under a root through the engine's own
``HostFiles``, and what it never does (follow out of root, block, read a directory whole, read a followed path twice,
run past its budget)."""

from __future__ import annotations

import errno
import os
import time

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node import plan_reader
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import read_plan as probe_plan
from ansible_collections.nodeops.numa_drift.tests.support.go_images import go_image


def write(root, path, data=b""):
    host = os.path.join(str(root), path.lstrip("/"))
    os.makedirs(os.path.dirname(host), exist_ok=True)
    with open(host, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    return host


def gathered(root, *rules, follows=None, seconds=plan_reader.SECONDS):
    return plan_reader.read_plan(str(root), list(rules), follows or {}, seconds=seconds)


def test_a_file_is_read_with_each_directory_on_the_way(tmp_path):
    write(tmp_path, "/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--v=2\n")
    entries = gathered(tmp_path, {"read": "/etc/default/kubelet"})
    assert entries == {
        "/etc": {"stat": {"kind": "dir"}},
        "/etc/default": {"stat": {"kind": "dir"}},
        "/etc/default/kubelet": {"stat": {"kind": "file"}, "text": {"text": "KUBELET_EXTRA_ARGS=--v=2\n", "size": 25}},
    }


def test_what_is_missing_is_recorded_as_the_kernel_says_it(tmp_path):
    entries = gathered(tmp_path, {"read": "/etc/rancher/k3s/config.yaml"})
    assert entries["/etc"] == {"stat": {"kind": "absent"}}
    assert entries["/etc/rancher/k3s/config.yaml"] == {"stat": {"kind": "absent"}}


def test_a_link_is_resolved_under_root_never_on_this_machine(tmp_path):
    write(tmp_path, "/usr/lib/systemd/system/kubelet.service", "[Service]\n")
    os.symlink("usr/lib", str(tmp_path / "lib"))
    os.symlink("/etc/passwd", str(tmp_path / "escape"))  # absolute: the node's /etc/passwd, under root
    entries = gathered(tmp_path, {"read": "/lib/systemd/system/kubelet.service"}, {"read": "/escape"})
    assert entries["/lib"] == {"stat": {"kind": "link", "target": "usr/lib"}}
    assert entries["/usr/lib/systemd/system/kubelet.service"]["text"]["text"] == "[Service]\n"
    assert entries["/escape"] == {"stat": {"kind": "link", "target": "/etc/passwd"}}
    assert entries["/etc"] == {"stat": {"kind": "absent"}}  # not this machine's /etc


def test_dot_dot_never_climbs_above_root(tmp_path):
    write(tmp_path, "/etc/os-release", "ID=debian\n")
    entries = gathered(tmp_path, {"read": "/../../../etc/os-release"})
    assert entries["/etc/os-release"]["text"]["text"] == "ID=debian\n"


def test_a_link_loop_ends(tmp_path):
    os.symlink("/b", str(tmp_path / "a"))
    os.symlink("/a", str(tmp_path / "b"))
    entries = gathered(tmp_path, {"read": "/a/file"})
    assert entries["/a"] == {"stat": {"kind": "link", "target": "/b"}} and entries["/b"] == {"stat": {"kind": "link", "target": "/a"}}


def test_a_raw_read_keeps_the_bytes_and_stops_one_past_the_limit(tmp_path, monkeypatch):
    write(tmp_path, "/proc/iomem", "0123456789")
    write(tmp_path, "/var/lib/kubelet/memory_manager_state", b"\xff\xfe{}")
    monkeypatch.setattr(plan_reader, "READ_LIMIT", 4)
    monkeypatch.setattr("ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files.READ_LIMIT", 4)
    entries = gathered(tmp_path, {"read": "/proc/iomem", "raw": True}, {"read": "/var/lib/kubelet/memory_manager_state", "raw": True})
    assert entries["/proc/iomem"]["raw"] == {"data": "01234", "size": 5}
    assert entries["/var/lib/kubelet/memory_manager_state"]["raw"] == {"base64": "//57fQ==", "size": 4}


def test_a_fifo_is_recorded_never_opened(tmp_path):
    os.makedirs(str(tmp_path / "etc"))
    os.mkfifo(str(tmp_path / "etc" / "fifo"))
    started = time.monotonic()
    entries = gathered(tmp_path, {"read": "/etc/fifo"}, {"read": "/etc/fifo", "raw": True})
    assert time.monotonic() - started < 5
    assert entries["/etc/fifo"] == {"stat": {"kind": "other", "type": 0o010000}}


def test_an_unreadable_file_is_an_error_record(tmp_path, monkeypatch):
    write(tmp_path, "/etc/default/kubelet", "x")
    real_open = os.open

    def refusing(path, flags, *args):
        if path.endswith("/etc/default/kubelet"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing)
    entries = gathered(tmp_path, {"read": "/etc/default/kubelet"})
    assert entries["/etc/default/kubelet"]["text"] == {"errno": errno.EACCES, "error": "Permission denied"}


def test_wildcards_and_alternatives_list_the_directories_they_search(tmp_path):
    for node in (0, 1):
        write(tmp_path, "/sys/devices/system/node/node%d/meminfo" % node, "Node %d MemTotal: 1 kB\n" % node)
        write(tmp_path, "/sys/devices/system/node/node%d/cpulist" % node, "0-3\n")
    write(tmp_path, "/sys/devices/system/node/online", "0-1\n")
    entries = gathered(tmp_path, {"read": "/sys/devices/system/node/node*/{meminfo,cpulist}", "raw": True})
    assert entries["/sys/devices/system/node"]["names"] == {"names": "node0/node1/online"}
    assert sorted(key for key in entries if "raw" in entries[key]) == [
        "/sys/devices/system/node/node0/cpulist", "/sys/devices/system/node/node0/meminfo",
        "/sys/devices/system/node/node1/cpulist", "/sys/devices/system/node/node1/meminfo"]
    assert "/sys/devices/system/node/online" not in entries  # listed, never looked at


def test_alternatives_spell_out_every_combination():
    assert plan_reader.alternatives("/{a,b}/{x,y}.service") == ["/a/x.service", "/a/y.service", "/b/x.service", "/b/y.service"]
    assert plan_reader.alternatives("/plain") == ["/plain"]


def test_a_list_rule_reads_only_the_entries_it_names(tmp_path):
    write(tmp_path, "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "[Service]\n")
    write(tmp_path, "/etc/systemd/system/kubelet.service.d/README", "not read")
    write(tmp_path, "/etc/systemd/system/kubelet.service.d/site/90-local.conf", "not read: systemd does not recurse")
    entries = gathered(tmp_path, {"list": "/etc/systemd/system/kubelet.service.d", "entries": ["*.conf"]})
    assert entries["/etc/systemd/system/kubelet.service.d"]["names"] == {"names": "10-kubeadm.conf/README/site"}
    assert entries["/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"]["text"]["text"] == "[Service]\n"
    assert not any(key.endswith(("README", "90-local.conf")) for key in entries)


def test_a_walk_is_kubelets_config_dir_walk(tmp_path):
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/50-numa.conf", "{}")
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/50-numa.conf.bak", "not read")
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/README", "not read")
    write(tmp_path, "/etc/kubernetes/kubelet.conf.d/site/90-local.conf", "{}")
    entries = gathered(tmp_path, {"walk": "/etc/kubernetes/kubelet.conf.d"})
    read = sorted(key for key, records in entries.items() if "text" in records)
    assert read == ["/etc/kubernetes/kubelet.conf.d/50-numa.conf", "/etc/kubernetes/kubelet.conf.d/site/90-local.conf"]
    assert entries["/etc/kubernetes/kubelet.conf.d/README"] == {"stat": {"kind": "file"}}  # a directory? no: not read


def test_follows_read_the_paths_a_file_names_as_their_rules_say(tmp_path):
    write(tmp_path, "/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--root-dir=/data/kubelet --config /etc/k.yaml --kubeconfig=/etc/kc\n")
    write(tmp_path, "/data/kubelet/memory_manager_state", "{}")
    write(tmp_path, "/etc/k.yaml", "kind: KubeletConfiguration\n")
    write(tmp_path, "/etc/kc", "kind: Config\n")
    rules, follows = probe_plan({})
    entries = gathered(tmp_path, {"read": "/etc/default/kubelet", "follow": ["kubelet-config", "kubelet-root-dir"]}, follows=follows)
    assert entries["/data/kubelet/memory_manager_state"]["raw"] == {"data": "{}", "size": 2}
    assert entries["/etc/k.yaml"]["text"]["text"] == "kind: KubeletConfiguration\n"
    assert "/etc/kc" not in entries  # --kubeconfig is no --config
    assert "/data" not in gathered(tmp_path, {"read": "/etc/default/kubelet"}, follows=follows)


def test_a_unit_specifier_in_a_followed_path_is_the_units_name(tmp_path):
    write(tmp_path, "/etc/systemd/system/k3s-agent.service", "[Service]\nEnvironmentFile=-/etc/default/%N\nExecStart=/usr/local/bin/k3s agent\n")
    write(tmp_path, "/etc/default/k3s-agent", "K3S_TOKEN=secret-token\n")
    _rules, follows = probe_plan({})
    entries = gathered(tmp_path, {"read": "/etc/systemd/system/k3s-agent.service", "follow": ["environment-file"]}, follows=follows)
    assert entries["/etc/default/k3s-agent"]["text"]["text"] == "K3S_TOKEN=REDACTED\n"


def test_a_followed_path_is_read_once_and_following_ends_after_a_few_steps(tmp_path):
    follows = {"next": {"pattern": r"--config=(/\S+)", "then": [{"read": "{}"}]}}
    write(tmp_path, "/etc/self", "--config=/etc/self\n" * 40)  # names itself 40 times
    started = time.monotonic()
    entries = gathered(tmp_path, {"read": "/etc/self", "follow": ["next"]}, follows=follows)
    assert time.monotonic() - started < 2 and entries["/etc/self"]["text"]["size"] == 19 * 40
    for index in range(8):
        write(tmp_path, "/etc/step%d" % index, "--config=/etc/step%d\n" % (index + 1))
    entries = gathered(tmp_path, {"read": "/etc/step0", "follow": ["next"]}, follows=follows)
    assert "/etc/step%d" % plan_reader.MAX_FOLLOW_DEPTH in entries and "/etc/step%d" % (plan_reader.MAX_FOLLOW_DEPTH + 2) not in entries


def test_a_when_rule_reads_its_rules_only_when_a_text_read_before_it_matches(tmp_path):
    write(tmp_path, "/etc/k.yaml", "cpuManagerPolicyOptions:\n  prefer-align-cpus-by-uncorecache: \"true\"\n")
    write(tmp_path, "/etc/other.yaml", "cpuManagerPolicy: static\n")
    write(tmp_path, "/sys/x/cache/index3/id", "7\n")
    when = {"when": r"prefer-align-cpus-by-uncorecache", "then": [{"read": "/sys/*/cache/index*/id", "raw": True}]}
    assert gathered(tmp_path, {"read": "/etc/k.yaml"}, when)["/sys/x/cache/index3/id"]["raw"] == {"data": "7\n", "size": 2}
    assert "/sys" not in gathered(tmp_path, {"read": "/etc/other.yaml"}, when)
    assert "/sys" not in gathered(tmp_path, when, {"read": "/etc/k.yaml"})  # only what was read before it counts
    assert "/sys" not in gathered(tmp_path, {"read": "/etc/k.yaml", "raw": True}, when)  # a raw read is no text


def test_a_file_served_in_pages_is_read_to_its_end(tmp_path, monkeypatch):
    write(tmp_path, "/proc/iomem", "a" * 10000)
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda handle, size: real_read(handle, min(size, 4096)))  # as procfs does
    assert gathered(tmp_path, {"read": "/proc/iomem", "raw": True})["/proc/iomem"]["raw"] == {"data": "a" * 10000, "size": 10000}


def test_the_size_budget_ends_in_an_error_record_never_a_short_file(tmp_path, monkeypatch):
    write(tmp_path, "/etc/a.conf", "a" * 80)
    write(tmp_path, "/etc/b.conf", "b" * 80)
    monkeypatch.setattr(plan_reader, "SENT_BYTES", 100)
    entries = gathered(tmp_path, {"read": "/etc/{a,b}.conf"})
    assert entries["/etc/a.conf"]["text"]["text"] == "a" * 80
    assert entries["/etc/b.conf"]["text"] == {"errno": errno.EFBIG, "error": "not read: the node reader's 100 bytes were spent"}


def test_the_time_budget_ends_in_error_records(tmp_path):
    write(tmp_path, "/etc/a.conf", "a")
    entries = gathered(tmp_path, {"read": "/etc/a.conf"}, seconds=-1)
    spent = {"kind": "error", "errno": errno.ETIME, "error": "not read: the node reader's -1 s were spent"}
    assert entries == {"/etc": {"stat": spent}, "/etc/a.conf": {"stat": spent}}


def test_zero_filled_files_cross_as_their_size_only(tmp_path):
    for index in range(4):
        write(tmp_path, "/etc/kubernetes/kubelet.conf.d/%02d.conf" % index, b"\0" * (1024 * 1024))
    entries = gathered(tmp_path, {"walk": "/etc/kubernetes/kubelet.conf.d"})
    records = [records["text"] for key, records in entries.items() if "text" in records]
    assert records == [{"size": 1024 * 1024, "binary": True}] * 4


def _program(root, path, text, marker):
    host = write(root, path, "#!/bin/sh\necho run >> '%s'\n%s" % (marker, text))
    os.chmod(host, 0o755)
    return host


def test_a_version_rule_records_the_first_line_the_program_prints_and_its_identity(tmp_path):
    marker = tmp_path / "runs"
    host = _program(tmp_path / "node", "/usr/bin/kubelet", "echo 'Kubernetes v1.36.3'\necho second line\nexit 0\n", marker)
    entries = gathered(tmp_path / "node", {"version": "/usr/bin/kubelet"})
    status = os.stat(host)
    assert entries["/usr/bin/kubelet"]["version"] == {
        "output": "Kubernetes v1.36.3", "rc": 0,
        "identity": "%d:%d:%d:%d" % (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)}
    assert marker.read_text() == "run\n"


def test_a_program_that_hangs_is_stopped_within_the_readers_own_time(tmp_path):
    # The reader's budget bounds the program too (its own limit is longer): the answer comes within the budget.
    marker = tmp_path / "runs"
    _program(tmp_path / "node", "/usr/bin/kubelet", "exec sleep 60\n", marker)
    started = time.monotonic()
    entries = plan_reader.read_plan(str(tmp_path / "node"), [{"version": "/usr/bin/kubelet"}], {}, seconds=1.0)
    assert time.monotonic() - started < 10
    assert entries["/usr/bin/kubelet"]["version"]["errno"] == errno.ETIME
    assert entries["/usr/bin/kubelet"]["version"]["error"].startswith("--version did not answer within 0.")


def test_a_program_the_controller_knows_by_its_identity_is_not_run_again(tmp_path):
    marker = tmp_path / "runs"
    _program(tmp_path / "node", "/usr/bin/kubelet", "echo 'Kubernetes v1.36.3'\n", marker)
    first = gathered(tmp_path / "node", {"version": "/usr/bin/kubelet"})["/usr/bin/kubelet"]["version"]
    known = {"/usr/bin/kubelet": dict(first, output="v1.36.3")}
    again = plan_reader.read_plan(str(tmp_path / "node"), [{"version": "/usr/bin/kubelet"}], {}, known=known)
    # The controller's record back, marked as remembered (the facts' release_source says so), and the program not run.
    assert again["/usr/bin/kubelet"]["version"] == dict(known["/usr/bin/kubelet"], remembered=True) and marker.read_text() == "run\n"
    stale = {"/usr/bin/kubelet": dict(first, identity="1:2:3:4")}
    plan_reader.read_plan(str(tmp_path / "node"), [{"version": "/usr/bin/kubelet"}], {}, known=stale)
    assert marker.read_text() == "run\nrun\n"


def _image(root, path, values):
    host = write(root, path, go_image(values))
    os.chmod(host, 0o755)  # an image of sections only: run, it would fail (Exec format error)
    return host


def test_a_kubelet_whose_file_holds_its_stamped_release_is_read_not_run(tmp_path):
    host = _image(tmp_path / "node", "/usr/bin/kubelet", ["v1.36.3", "v0.0.0-master+$Format:%H$"])
    entries = gathered(tmp_path / "node", {"version": "/usr/bin/kubelet"})
    status = os.stat(host)
    assert entries["/usr/bin/kubelet"]["version"] == {
        "output": "v1.36.3", "rc": 0, "stamped": True,
        "identity": "%d:%d:%d:%d" % (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)}


def test_a_kubelet_whose_file_cannot_tell_is_run(tmp_path):
    # Two releases in its data: which is kubelet's is not known, so the program is asked (here it cannot run).
    _image(tmp_path / "node", "/usr/bin/kubelet", ["v1.36.3", "v1.2.3"])
    record = gathered(tmp_path / "node", {"version": "/usr/bin/kubelet"})["/usr/bin/kubelet"]["version"]
    assert record["errno"] == errno.ENOEXEC and "stamped" not in record


def test_the_embedding_distributions_programs_are_always_run(tmp_path):
    # k3s, rke2, k0s stamp releases of their own beside kubelet's: their answer to --version is what counts.
    _image(tmp_path / "node", "/usr/local/bin/k3s", ["v1.34.4+k3s1"])
    record = gathered(tmp_path / "node", {"version": "/usr/local/bin/k3s"})["/usr/local/bin/k3s"]["version"]
    assert record["errno"] == errno.ENOEXEC


def test_a_program_of_another_name_is_never_run_and_nothing_is_recorded_of_it(tmp_path):
    marker = tmp_path / "runs"
    _program(tmp_path / "node", "/usr/local/bin/start-kubelet.sh", "echo 'Kubernetes v1.36.3'\n", marker)
    entries = gathered(tmp_path / "node", {"version": "/usr/local/bin/start-kubelet.sh"})
    assert not marker.exists() and "/usr/local/bin/start-kubelet.sh" not in entries


def test_the_program_a_unit_runs_is_asked_through_its_follow(tmp_path):
    marker = tmp_path / "runs"
    _program(tmp_path / "node", "/opt/kubelet/kubelet", "echo 'Kubernetes v1.34.4'\n", marker)
    write(tmp_path / "node", "/etc/systemd/system/kubelet.service",
          "[Service]\nExecStart=/usr/local/bin/kubenswrapper /opt/kubelet/kubelet --config=/etc/kubernetes/kubelet.conf\n")
    rules, follows = probe_plan({})
    entries = plan_reader.read_plan(str(tmp_path / "node"), rules, follows)
    assert entries["/opt/kubelet/kubelet"]["version"]["output"] == "Kubernetes v1.34.4"
    assert "version" not in entries.get("/usr/local/bin/kubenswrapper", {})
    rules, follows = probe_plan({"kubelet_release": "1.34"})
    assert all("version" not in rule for rule in rules) and "exec-program" not in follows
