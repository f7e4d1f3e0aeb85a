#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __guard_program
short_description: Install the boot guard program numa-drift-guard, built from this collection's engine (internal)
version_added: 0.2.0
description:
  - Internal to the role M(nodeops.numa_drift.guard) (an action plugin); use that role rather than this plugin.
  - Builds, on the controller, one self-contained executable (a Python zipapp behind C(#!/usr/bin/env python3)) from
    this collection's own C(plugins/module_utils), and copies it to I(dest) with mode 0755.
  - The build is reproducible (fixed timestamps, name order), so the task reports C(changed) only when the bytes differ.
  - The program needs only the node's C(python3) (3.9 or newer, standard library only; YAML kubelet configs are read by the engine's own reader).
    See the collection's docs/guard.md.
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  action:
    description: Runs on the controller (it builds the file there) and copies it to the node.
    support: full
  check_mode:
    description: Predicts the change as ansible.builtin.copy does.
    support: full
  diff_mode:
    description: Not shown for this binary file.
    support: none
  platform:
    description: Linux nodes with systemd.
    support: full
    platforms: posix
options:
  dest:
    description:
      - Where the program goes on the node. The role prefixes C(guard_root).
    type: path
    default: /usr/local/libexec/nodeops-numa-drift/numa-drift-guard
seealso:
  - module: nodeops.numa_drift.kubelet_mm_checkpoint
"""

EXAMPLES = r"""
- name: Install the boot guard program
  nodeops.numa_drift.__guard_program:
    dest: /usr/local/libexec/nodeops-numa-drift/numa-drift-guard
"""

RETURN = r"""
dest:
  description: The installed program.
  returned: success
  type: str
  sample: /usr/local/libexec/nodeops-numa-drift/numa-drift-guard
"""
