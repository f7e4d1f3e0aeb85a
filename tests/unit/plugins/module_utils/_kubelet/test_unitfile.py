# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_kubelet/unitfile.py: systemd's word splitting, environment files and unit specifiers."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import expand_specifiers, parse_env_file, split_words


def test_env_file_parsing():
    text = (
        "# written by kubeadm\n"
        'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock '
        '--reserved-memory=0:memory=1Gi;1:memory=1Gi"\n'
        "; another comment\n"
        "KUBELET_EXTRA_ARGS='--root-dir /data/kubelet'\n"
        "PLAIN=--a --b\n"
        "not a variable line\n"
        "1BAD=x\n"
    )
    variables, problems = parse_env_file(text)
    assert variables == {
        "KUBELET_KUBEADM_ARGS": "--container-runtime-endpoint=unix:///run/containerd/containerd.sock "
        "--reserved-memory=0:memory=1Gi;1:memory=1Gi",
        "KUBELET_EXTRA_ARGS": "--root-dir /data/kubelet",
        "PLAIN": "--a --b",
    }
    assert [problem.split(":")[0] for problem in problems] == ["line 6", "line 7"]


def test_split_words_unquotes_and_unescapes_as_systemd():
    # A backslash before a space keeps the space in the word, as systemd's extract_first_word(EXTRACT_CUNESCAPE) does.
    assert split_words('/usr/bin/kubelet "--a=b c" \'--d\' e\\ f') == (["/usr/bin/kubelet", "--a=b c", "--d", "e f"], None)
    assert split_words('"unterminated')[1] == 'unterminated " quote'


def test_systemd_quoting_and_env_file_continuations():
    assert split_words('a "b c" \'d\' e\\ f') == (["a", "b c", "d", "e f"], None)
    assert split_words('"open')[1] == 'unterminated " quote'
    variables, problems = parse_env_file('KUBELET_ARGS="--a=1 \\\n--b=2"\nX=\'y z\'\n')
    assert variables == {"KUBELET_ARGS": "--a=1 --b=2", "X": "y z"} and problems == []


def test_systemd_specifiers():
    assert expand_specifiers("/etc/default/%N", "rke2-agent.service") == "/etc/default/rke2-agent"
    assert expand_specifiers("%n %%n %%%N %i", "k3s.service") == "k3s.service %n %k3s %i"
