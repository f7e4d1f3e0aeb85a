# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``ansible-doc`` shows a user: the three modules they use, not the playbooks' plumbing.

The plumbing is named ``__<name>`` (``plugins/modules/__rollout_gate.py``, ...): ansible-core's plugin
listing skips files whose name starts with ``__``, while the loader still resolves
``nodeops.numa_drift.__<name>`` for the roles and playbooks (and ``ansible-doc`` still shows its
documentation when asked by that name). ansible-test's action-plugin-docs sanity test pairs
``plugins/action/__<name>.py`` with ``plugins/modules/__<name>.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import ansible_collections.nodeops.numa_drift as collection

DOC = os.path.join(os.path.dirname(sys.executable), "ansible-doc")
# <root>/ansible_collections/nodeops/numa_drift: the conftest's tree, first on the collections path.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(list(collection.__path__)[0]))))
PUBLIC = ["nodeops.numa_drift.kubelet_mm_checkpoint", "nodeops.numa_drift.numa_drift_facts",
          "nodeops.numa_drift.numa_drift_metrics"]
INTERNAL = ["fleet_report", "guard_program", "node_cordon", "remediate_outcome", "remediate_plan",
            "rollout_gate", "remediate_wait", "role_arguments"]


def _doc(*args):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=ROOT, ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
    done = subprocess.run([DOC] + list(args), capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_list_shows_the_three_user_modules_only():
    listed = re.findall(r"^(nodeops\.numa_drift\.\S+)", _doc("-t", "module", "-l", "nodeops.numa_drift"), re.MULTILINE)
    assert sorted(listed) == PUBLIC


@pytest.mark.parametrize("name", INTERNAL)
def test_internal_plugins_keep_their_documentation(name):
    shown = _doc("-t", "module", "nodeops.numa_drift.__" + name)
    assert "nodeops.numa_drift.__%s" % name in shown
    assert "internal" in shown.lower()


@pytest.mark.parametrize("name", PUBLIC)
def test_the_user_modules_documentation_parses(name):
    assert "> MODULE %s" % name in _doc("-t", "module", name)


def test_kubelet_mm_checkpoint_sends_cluster_users_to_the_remediate_playbook():
    shown = " ".join(_doc("-t", "module", "nodeops.numa_drift.kubelet_mm_checkpoint").split())
    assert "for people who drive kubelet themselves" in shown
    assert "ansible-playbook -i INVENTORY nodeops.numa_drift.remediate --limit NODE" in shown
