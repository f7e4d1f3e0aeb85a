# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the demo's example fleet: fake kubelet nodes just after a reboot, and their inventory.

Usage: ``python scripts/demo/build_nodes.py DIR``. Writes ``DIR/nodes/<host>/`` (sysfs, /proc/iomem,
kubelet config and checkpoint, as a node sees them after the reboot) and ``DIR/inventory.yml``.
"""

from __future__ import annotations

import os
import shutil
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, CHECKOUT)
# conftest puts the collection on sys.path.
import conftest  # noqa: E402,F401  pylint: disable=unused-import,wrong-import-position

from ansible_collections.nodeops.numa_drift.tests.unit.plugins.module_utils import scenario  # noqa: E402

BEFORE = scenario.two_node_boot()
KASLR = BEFORE.moved(node0=-45260, node1=45260)  # the kernel image (44.2 MiB) moved to node 1
PODS = scenario.guaranteed_pods(6, (0,), 4 * scenario.GIB)

# host -> (what happened at the reboot, how to build it)
NODES = {
    "worker-01": ("KASLR moved the kernel image between NUMA nodes", lambda root: scenario.write_kubelet_node(root, BEFORE, KASLR, pods=PODS)),
    "worker-02": ("KASLR move, kubelet 1.37 (V3) checkpoint",
                  lambda root: scenario.write_kubelet_node(root, BEFORE, KASLR, pods=PODS, layout="v3")),
    "worker-03": ("12 KiB less boot memory on node 0", lambda root: scenario.write_kubelet_node(root, BEFORE, BEFORE.moved(node0=-12), pods=PODS)),
    "worker-04": ("nothing moved", lambda root: scenario.write_kubelet_node(root, BEFORE, pods=PODS)),
    "worker-05": ("a DIMM lost: node 0 is 1 GiB smaller",
                  lambda root: scenario.write_kubelet_node(root, BEFORE, BEFORE.moved(node0=-scenario.GIB // scenario.KIB), pods=PODS)),
    "worker-06": ("1Gi hugepages not allocated after the reboot",
                  lambda root: scenario.write_kubelet_node(root, scenario.two_node_boot(hugepages_1g=4), scenario.two_node_boot(hugepages_1g=0))),
}


def main(directory: str) -> int:
    nodes_dir = os.path.join(directory, "nodes")
    shutil.rmtree(nodes_dir, ignore_errors=True)
    lines = ["---", "demo_nodes:", "  vars:", "    ansible_connection: local",
             '    ansible_python_interpreter: "{{ ansible_playbook_python }}"', "  hosts:"]
    for host, (story, build) in NODES.items():
        root = build(os.path.join(nodes_dir, host))
        lines += ["    %s:" % host, "      node_root: %s" % root, '      demo_story: "%s"' % story]
        print("  %-10s %s" % (host, story))
    with open(os.path.join(directory, "inventory.yml"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
