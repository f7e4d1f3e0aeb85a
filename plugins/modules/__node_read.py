#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __node_read
short_description: Read what the probe's read plan names on a node (internal)
version_added: 0.9.0
description:
  - Internal to M(nodeops.numa_drift.numa_drift_facts); use that module rather than this one. Its action plugin runs this
    module where Ansible does not pipeline modules (or the host's Python is not known yet); with pipelining it sends the
    same reader (the collection's C(module_utils/_node/plan_reader.py) with C(_common/node_files.py) and
    C(_common/credentials.py)) to the node's Python on standard input instead, without the module wrapper.
  - Reads through the engine's own node files (symbolic links resolved as the node resolves them, never above O(root))
    exactly what each rule of O(plan) names, and records what every look-up met, per node path.
  - A file that holds a key, certificate, kubeconfig or token is never read; credential values in the files that are
    read are redacted on the node. A directory is listed by name; only the entries a rule names are read.
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
      - Rules, each with one verb, C(read) (a file's text; C(raw=true) its bytes), C(list) (a directory's names and the text
        of its C(entries) patterns), C(walk) (kubelet's C(--config-dir)) or C(stat), naming a node path (C({a,b}) spells
        out alternatives, C(*), C(?) and C([...]) in a component match entry names; C(literal=true) takes it as written),
        and C(follow), the names of the O(follows) to apply to the text read; or C(when), a regular expression, and
        C(then), rules read only when a text read before it matches.
    type: list
    elements: dict
    required: true
  follows:
    description: Follows by name, each a C(pattern) (a regular expression whose group is a node path) and C(then), the rules
      to apply to that path (C({}) in them).
    type: dict
    default: {}
  known:
    description: What programs said of their release before, by node path (C(output), C(rc), C(identity)); a program whose
      identity is the same is not asked again.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Read kubelet's unit, its drop-ins and the configuration file its --config names
  nodeops.numa_drift.__node_read:
    plan:
      - read: /etc/systemd/system/kubelet.service
        follow: [kubelet-config]
      - list: /etc/systemd/system/kubelet.service.d
        entries: ["*.conf"]
        follow: [kubelet-config]
    follows:
      kubelet-config:
        pattern: "(?<![\\w-])--config(?:=|[ \\t]+)(/\\S+)"
        then:
          - read: "{}"
  register: read
"""

RETURN = r"""
entries:
  description: >-
    Per node path, what was met there: C(stat) (C(kind) C(file), C(dir), C(link) with its C(target), C(absent), C(other),
    C(error)), C(names) (a directory's entry names joined by C(/)), C(text) (a text file's redacted C(text), or why it is
    C(withheld)) and C(raw) (a file's C(data), or C(base64)), each with C(errno) and C(error) when it failed.
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
            follows=dict(type="dict", default={}),
            known=dict(type="dict", default={}),
        ),
        supports_check_mode=True,
    )
    params = module.params
    module.exit_json(changed=False, entries=read_plan(params["root"], params["plan"], params["follows"], known=params["known"]))


if __name__ == "__main__":
    main()
