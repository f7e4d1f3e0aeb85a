# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guard role with the real ansible-playbook (local connection) into a node tree: install, run, remove."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ansible_collections.nodeops.numa_drift.tests.integration.test_playbook_fake_nodes import ansible_environment, ansible_playbook
from ansible_collections.nodeops.numa_drift.tests.support.scenario import (
    checkpoint_file,
    guaranteed_pods,
    tree_snapshot,
    two_node_boot,
    write_kubelet_node,
)

PROGRAM = "usr/local/libexec/nodeops-numa-drift/numa-drift-guard"
DROPIN = "etc/systemd/system/kubelet.service.d/nodeops-numa-drift-guard.conf"
UNIT = "[Unit]\nDescription=kubelet\n[Service]\nExecStart=/usr/bin/kubelet --config=/var/lib/kubelet/config.yaml\nRestart=always\n"


def play(tmp_path, env, root, **extra):
    playbook = tmp_path / "guard.yml"
    playbook.write_text("- hosts: localhost\n  gather_facts: false\n  roles:\n    - role: nodeops.numa_drift.guard\n")
    variables = dict({"guard_root": root, "guard_kubelet_service": "kubelet", "ansible_python_interpreter": sys.executable}, **extra)
    done = subprocess.run([ansible_playbook(), "-i", "localhost,", "-c", "local", str(playbook), "-e", json.dumps(variables)],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_install_run_and_remove_leave_the_unit_as_before(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260),
                              pods=guaranteed_pods(2, (0,)), extra_files={"etc/systemd/system/kubelet.service": UNIT})
    untouched = tree_snapshot(root)
    env = ansible_environment(tmp_path)

    out = play(tmp_path, env, root, guard_drift_bound="128Mi")
    assert "changed=3" in out or "changed=4" in out
    program = os.path.join(root, PROGRAM)
    assert os.stat(program).st_mode & 0o777 == 0o755
    with open(os.path.join(root, DROPIN), encoding="utf-8") as handle:
        dropin = handle.read()
    assert "ExecStartPre=-/usr/local/libexec/nodeops-numa-drift/numa-drift-guard " in dropin and "--drift-bound 128Mi" in dropin
    assert "changed=0" in play(tmp_path, env, root, guard_drift_bound="128Mi")  # same bytes: nothing changes

    # What systemd would run, with the node's plain python3 and no Ansible.
    original = tree_snapshot(root)[os.path.relpath(checkpoint_file(root), root)]
    done = subprocess.run(["/usr/bin/python3", "-I", program, "--root", root, "--drift-bound", "128Mi"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and "action repaired" in done.stderr, done.stderr
    assert tree_snapshot(root)[os.path.relpath(checkpoint_file(root), root)] != original

    play(tmp_path, env, root, guard_state="absent")
    after = tree_snapshot(root)
    ours = ("var/lib/nodeops-numa-drift/", "var/lib/kubelet/memory_manager_state")
    assert {p: b for p, b in after.items() if not p.startswith(ours)} == {p: b for p, b in untouched.items() if not p.startswith(ours)}
    assert not os.path.exists(os.path.join(root, "etc/systemd/system/kubelet.service.d"))
    assert not os.path.exists(os.path.join(root, "var/lib/nodeops-numa-drift/guard.json"))
    assert os.path.exists(os.path.join(root, "var/lib/nodeops-numa-drift/history.json"))  # shared with the remediate role
