# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe through a real ``ansible-playbook`` of the ansible-core this runs under (2.21, and 2.19 in the test
command's second run): interpreter discovery on first contact through the ``__node_read`` module, then the reader
program on the discovered interpreter's standard input with pipelining, the module path without; the same facts as the
engine on the node each time, and nothing secret in what Ansible shows at -vvv."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.facts import assessment_facts
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.support.scenario import guaranteed_pods, two_node_boot, write_kubelet_node

# The directory that holds ansible_collections/nodeops/numa_drift (the root conftest.py makes it for plain pytest).
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(list(sys.modules["ansible_collections.nodeops.numa_drift"].__path__)[0])))
PLAYBOOK = """
- hosts: node
  gather_facts: false
  tasks:
    - name: Probe on first contact
      nodeops.numa_drift.numa_drift_facts:
        root: "{{ node_root }}"
      register: first
    - name: Probe again
      nodeops.numa_drift.numa_drift_facts:
        root: "{{ node_root }}"
      register: second
    - name: Keep what the probes said
      ansible.builtin.copy:
        content: "{{ {'first': first.numa_drift, 'second': second.numa_drift,
                      'interpreter': ansible_facts.discovered_interpreter_python | default(none)} | to_json }}"
        dest: "{{ output }}"
        mode: "0600"
"""


def ansible_playbook():
    return os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


@pytest.mark.parametrize("pipelining", [True, False], ids=["pipelining", "no pipelining"])
def test_a_real_playbook_discovers_then_reads_and_gives_the_engines_facts(tmp_path, pipelining):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-45260, node1=45260), pods=guaranteed_pods(2, (0,)),
                              extra_files={"/etc/default/kubelet": "KUBELET_EXTRA_ARGS=--v=2\nK3S_TOKEN=K10-planted-c0ffee\n"})
    (tmp_path / "site.yml").write_text(PLAYBOOK)
    (tmp_path / "hosts").write_text("node ansible_connection=local ansible_python_interpreter=auto_silent node_root=%s output=%s\n"
                                    % (root, tmp_path / "out.json"))
    # The node's own PATH (a pyenv shim on this machine's would be discovered and fail): its system Python is found.
    environment = dict(os.environ, PATH="/usr/local/bin:/usr/bin:/bin", ANSIBLE_COLLECTIONS_PATH=COLLECTIONS,
                       ANSIBLE_PIPELINING=str(pipelining), ANSIBLE_NOCOLOR="1",
                       ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_REMOTE_TMP=str(tmp_path / "rtmp"))
    done = subprocess.run([ansible_playbook(), "-vvv", "-i", str(tmp_path / "hosts"), str(tmp_path / "site.yml")], env=environment,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    said = json.loads((tmp_path / "out.json").read_text())
    expected = json.loads(json.dumps(assessment_facts(probe(HostFiles(root)))))
    for run in ("first", "second"):
        facts = dict(said[run])
        facts["advice"] = expected["advice"]
        assert facts == expected, run
    assert said["interpreter"]  # discovered on first contact, kept for the next task
    reader_on_stdin = done.stdout.count("numa_drift_facts: the node reader, ")
    assert reader_on_stdin == (1 if pipelining else 0), done.stdout[-3000:]
    assert "K10-planted-c0ffee" not in done.stdout + done.stderr
