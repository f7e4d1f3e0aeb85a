#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __role_arguments
short_description: Check the remediate role's variables before it runs (internal)
version_added: 0.1.0
description:
  - Internal to the playbooks of this collection (an action plugin; no module runs on the node).
  - Checks the C(remediate_*) variables set for the host against the role's C(meta/argument_specs.yml) and fails with
    one short line per mistake, naming the variable and what it takes (C(remediate_loop_max_repairs must be an integer,
    got a string ('lots'))), before the role's own validation would print its whole argument spec.
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Changes nothing.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  entry_point:
    description: The entry point of the role whose options are checked.
    type: str
    default: main
    choices: [main, probe, rollback]
"""

EXAMPLES = r"""
- name: Check the role's variables
  nodeops.numa_drift.__role_arguments:
    entry_point: main
"""

RETURN = r"""
msg:
  description: What was found.
  returned: always
  type: str
"""
