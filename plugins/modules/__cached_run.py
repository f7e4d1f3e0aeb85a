#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: __cached_run
short_description: Run one of this collection's modules from the node's bytecode cache (internal)
version_added: 0.3.0
description:
  - Internal to the action plugin of M(nodeops.numa_drift.numa_drift_facts); not meant for playbooks.
  - The action plugin names the module and every engine file it imports, each by the SHA-256 of its source, in the
    environment variable C(NODEOPS_NUMA_DRIFT_MANIFEST). When the node's bytecode cache holds all of them, this runs
    that module from the cache with the task's own arguments, so the engine's source is neither sent nor compiled.
  - Otherwise it returns C(nodeops_numa_drift_bytecode_cache) (C(miss), C(unusable) or C(off)) and the action plugin
    runs the module itself, which fills the cache. See docs/fleet-scale.md.
author:
  - nodeops.numa_drift contributors (@nodeops)
attributes:
  check_mode:
    description: Whatever the module it runs supports.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options: {}
seealso:
  - module: nodeops.numa_drift.numa_drift_facts
"""

EXAMPLES = r"""
# Not used directly: nodeops.numa_drift.numa_drift_facts runs it.
"""

RETURN = r"""
nodeops_numa_drift_bytecode_cache:
  description: Why the module was not run from the cache (C(miss), C(unusable), C(off)).
  returned: when the module was not run
  type: str
  sample: miss
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode


def main():
    outcome = _bytecode.run_cached()  # returns only when the cache could not run the module (it exits)
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    module.exit_json(changed=False, **{_bytecode.OUTCOME_KEY: outcome})


if __name__ == "__main__":
    main()
