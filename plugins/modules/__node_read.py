#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __node_read
short_description: Read the files a read plan names on a node, as they are (internal)
version_added: 0.9.0
description:
  - Internal to M(nodeops.numa_drift.numa_drift_facts); use that module rather than this one. Its action plugin runs this
    module where Ansible does not pipeline modules; with pipelining it sends the same reader (the collection's
    C(module_utils/_node/plan_reader.py)) to the node's Python on standard input instead, without the module wrapper.
  - Knows nothing of kubelet. For each rule of O(plan) it resolves a node path under O(root) one component at a time
    (symbolic links as the node resolves them, never above O(root)) and records what each component is, a regular
    file's bytes (at most the rule's limit and one byte more), a directory's entry names, a link's target.
  - With C(follow=true) in a rule, the patterns of O(follow) are applied to the text of every file it read; each match
    names one more node path (or several, the match with each of the pattern's suffixes appended), read by the same rule.
  - Reads only; never changes anything.
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Only reads.
    support: full
  diff_mode:
    description: No diff.
    support: none
options:
  root:
    description: Where the node's root file system is (C(/), or C(/host) when it is mounted there).
    type: str
    default: /
  plan:
    description:
      - Rules, each with C(path) (a node path; C({a,b}) spells out alternatives, C(*), C(?) and C([...]) in a component
        match entry names), C(limit) (bytes), C(entries) (a pattern; a directory's matching entries are read too, and its
        sub-directories) and C(follow) (a boolean).
    type: list
    elements: dict
    required: true
  follow:
    description: Pairs of a regular expression with one group (a node path) and a list of suffixes.
    type: list
    elements: list
    default: []
"""

EXAMPLES = r"""
- name: Read kubelet's drop-ins and the paths they name (what numa_drift_facts' action plugin sends)
  nodeops.numa_drift.__node_read:
    plan:
      - path: /etc/systemd/system/kubelet.service.d
        entries: "*.conf"
        limit: 1048576
        follow: true
    follow:
      - ["--root-dir[= ](/\\S+)", ["/memory_manager_state"]]
  register: read
"""

RETURN = r"""
entries:
  description: >-
    Per node path met: C([f, text]) a regular file (C([b, base64]) when not UTF-8), C([d, names]) a directory (its
    entry names joined by C(/), null when it was only passed through), C([l, target]) a symbolic link, C([a]) nothing there, C([o, kind]) anything
    else, C([e, errno, text]) an error.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodeops.numa_drift.plugins.module_utils._node.plan_reader import read_plan


def main():
    module = AnsibleModule(
        argument_spec=dict(
            root=dict(type="str", default="/"),
            plan=dict(type="list", elements="dict", required=True),
            follow=dict(type="list", elements="list", default=[]),
        ),
        supports_check_mode=True,
    )
    module.exit_json(changed=False, entries=read_plan(module.params["root"], module.params["plan"], module.params["follow"]))


if __name__ == "__main__":
    main()
