# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugins/plugin_utils/_role_args.py and the __role_arguments action: a remediate role variable of the wrong type fails
with one short line naming it and what it takes, checked against the role's own meta/argument_specs.yml; through a real
ansible-playbook, before the role's own validation would print its whole argument spec."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._role_args import role_options, role_variable_problems

# The directory that holds ansible_collections/nodeops/numa_drift (the root conftest.py makes it for plain pytest).
COLLECTIONS = os.path.dirname(os.path.dirname(os.path.dirname(list(sys.modules["ansible_collections.nodeops.numa_drift"].__path__)[0])))


@pytest.mark.parametrize("values, problems", [
    ({"remediate_loop_max_repairs": "lots"}, ["remediate_loop_max_repairs must be an integer, got a string ('lots')"]),
    ({"remediate_loop_window_hours": "a day"}, ["remediate_loop_window_hours must be a number, got a string ('a day')"]),
    ({"remediate_cordon_unrepairable": "maybe"}, ["remediate_cordon_unrepairable must be a boolean (true or false), got a string ('maybe')"]),
    ({"remediate_kubelet_release": ["1.34"]}, ["remediate_kubelet_release must be a string, got a list"]),
    ({"remediate_root": {"path": "/host"}}, ["remediate_root must be a path (a string), got a mapping"]),
    ({"remediate_untested_release": "sometimes"}, ["value of remediate_untested_release must be one of: refuse, nearest, got: sometimes"]),
    # What fits is not a problem; raw takes anything; a variable of no spec is not looked at.
    ({"remediate_loop_max_repairs": "3", "remediate_cordon_unrepairable": "yes", "remediate_reserved_memory": 5, "unrelated": []}, []),
])
def test_a_variable_that_does_not_fit_is_named_with_what_it_takes(values, problems):
    assert role_variable_problems(role_options("main"), values) == problems


def test_every_entry_point_of_the_role_is_read():
    assert "remediate_loop_max_repairs" in role_options("main")
    assert "remediate_rollback_file" in role_options("rollback") and "remediate_node_name" in role_options("probe")
    with pytest.raises(KeyError, match="no entry point 'nope'"):
        role_options("nope")


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Check the role's variables
      nodeops.numa_drift.__role_arguments:
    - name: Run the role
      ansible.builtin.include_role:
        name: nodeops.numa_drift.remediate
"""


def run_playbook(tmp_path, *extra):
    (tmp_path / "site.yml").write_text(PLAYBOOK)
    environment = {key: value for key, value in os.environ.items() if not key.startswith("ANSIBLE_")}
    environment.update(ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="False",
                       ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), str(tmp_path / "site.yml")] + list(extra),
                          env=environment, capture_output=True, text=True, timeout=120, check=False)


def test_a_playbook_stops_at_the_check_with_one_short_line_not_the_roles_whole_spec(tmp_path):
    done = run_playbook(tmp_path, "-e", "remediate_loop_max_repairs=lots")
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert ("variables of the remediate role: remediate_loop_max_repairs must be an integer, got a string ('lots')") in said
    assert "argument_spec_data" not in said and "Validating arguments against arg spec" not in said
    assert "is of type str" not in said and len(said) < 2000, said


def test_without_the_check_ansible_prints_the_roles_whole_spec(tmp_path):
    # Why the check exists: Ansible's own validation of the role names the variable in its own words, with the whole spec.
    (tmp_path / "site.yml").write_text(PLAYBOOK)
    done = run_playbook(tmp_path, "-e", "remediate_loop_max_repairs=lots", "--start-at-task", "Run the role")
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "argument 'remediate_loop_max_repairs' is of type str and we were unable to convert to int" in said
    assert "argument_spec_data" in said and len(said) > 5000
