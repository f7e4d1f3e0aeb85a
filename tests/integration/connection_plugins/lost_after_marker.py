# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test connection: the local connection, lost for good once a marker file exists (a node that drops off mid-run).

Enabled by the fleet tests with ANSIBLE_CONNECTION_PLUGINS pointing here and ``ansible_connection: lost_after_marker``;
the host's ``sandbox_lost_marker`` names the file. A command the node runs (its kubelet stop command, say) creates it:
every later command on that host fails as unreachable, as over SSH to a node that went away.
"""

from __future__ import annotations

DOCUMENTATION = r"""
name: lost_after_marker
short_description: The local connection, unreachable once a marker file exists (tests only)
description:
  - Runs everything like P(ansible.builtin.local#connection); once the file O(marker) exists, every command
    and file transfer fails with a connection failure (the host becomes unreachable).
author: nodeops.numa_drift contributors
options:
  marker:
    description: The file whose existence means the connection is lost.
    type: str
    required: true
    vars:
      - name: sandbox_lost_marker
  become_success_timeout:
    description: As P(ansible.builtin.local#connection)'s.
    type: int
    default: 10
    vars:
      - name: ansible_local_become_success_timeout
  become_strip_preamble:
    description: As P(ansible.builtin.local#connection)'s.
    type: bool
    default: true
    vars:
      - name: ansible_local_become_strip_preamble
extends_documentation_fragment:
  - connection_pipelining
"""

import os
from typing import Any

from ansible.errors import AnsibleConnectionFailure
from ansible.plugins.connection.local import Connection as LocalConnection


class Connection(LocalConnection):
    """ansible.builtin.local until the marker exists, then unreachable."""

    transport = "lost_after_marker"

    def _check_marker(self) -> None:
        marker = self.get_option("marker")
        if marker and os.path.exists(marker):
            raise AnsibleConnectionFailure("connection to the node lost (test marker %s exists)" % marker)

    def exec_command(self, cmd: str, in_data: Any = None, sudoable: bool = True) -> Any:
        self._check_marker()
        return super().exec_command(cmd, in_data=in_data, sudoable=sudoable)

    def put_file(self, in_path: str, out_path: str) -> None:
        self._check_marker()
        super().put_file(in_path, out_path)

    def fetch_file(self, in_path: str, out_path: str) -> None:
        self._check_marker()
        super().fetch_file(in_path, out_path)
