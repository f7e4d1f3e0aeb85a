# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kubelet_mm_checkpoint and numa_drift_metrics through a real ``ansible-playbook``: an option of the wrong type fails
the task in the collection's words before the module runs on the node; right ones run the module as before (check
mode included)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ansible_collections.nodeops.numa_drift.tests.support.scenario import guaranteed_pods, tree_snapshot, two_node_boot, write_kubelet_node

COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(list(sys.modules["ansible_collections.nodeops.numa_drift"].__path__)[0])))
PLAYBOOK = """
- hosts: node
  gather_facts: false
  tasks:
    - name: A count given as words
      nodeops.numa_drift.kubelet_mm_checkpoint:
        root: "{{ node_root }}"
        loop_max_repairs: lots
        backup: maybe
      register: words
      ignore_errors: true
    - name: A directory given as a list
      nodeops.numa_drift.numa_drift_metrics:
        root: "{{ node_root }}"
        textfile_dir: [a, b]
      register: listed
      ignore_errors: true
    - name: The repair previewed (check mode), options of their types
      nodeops.numa_drift.kubelet_mm_checkpoint:
        root: "{{ node_root }}"
        loop_max_repairs: "5"
      check_mode: true
      register: preview
    - name: Keep what they said
      ansible.builtin.copy:
        content: "{{ {'words': words, 'listed': listed, 'preview': preview} | to_json }}"
        dest: "{{ output }}"
        mode: "0600"
      delegate_to: localhost
"""


def test_mistyped_options_fail_in_the_collections_words_and_right_ones_run_the_module(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)))
    untouched = tree_snapshot(root)
    (tmp_path / "site.yml").write_text(PLAYBOOK)
    (tmp_path / "hosts").write_text("node ansible_connection=local ansible_python_interpreter=%s node_root=%s output=%s\n"
                                    % (sys.executable, root, tmp_path / "out.json"))
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
                       ANSIBLE_REMOTE_TMP=str(tmp_path / "rtmp"))
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "hosts"),
                           str(tmp_path / "site.yml")], env=environment, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    said = json.loads((tmp_path / "out.json").read_text())
    assert said["words"]["failed"] is True
    assert said["words"]["msg"] == ("backup must be a boolean (true or false), got a string ('maybe'); "
                                    "loop_max_repairs must be an integer, got a string ('lots')")
    assert said["listed"]["failed"] is True and said["listed"]["msg"] == "textfile_dir must be a path (a string), got a list"
    assert "unable to convert" not in done.stdout
    # The module ran on the node: the preview of a repair, nothing written.
    assert said["preview"]["changed"] is True and said["preview"]["numa_drift"]["verdict"] == "drift_within_bound", said["preview"]
    assert tree_snapshot(root) == untouched
