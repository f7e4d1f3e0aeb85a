# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render guests' boot records (qemu.py's vm.json) as Markdown: per-node MemTotal of every boot.

  evidence.py RECORD.json [RECORD.json ...]      one table per guest, on stdout

Also usable as a measurement tool: ``evidence.py --boots N --vm-dir D`` reboots a defined guest
N times with its current layout (tests/vm/qemu.py) and then prints its table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))


def kib(value: int) -> str:
    return "{:,}".format(value)


def signed(value: int) -> str:
    return "0" if value == 0 else "{:+,}".format(value)


def table(vm: dict) -> str:
    boots: List[dict] = vm["boots"]
    nodes = sorted({name for boot in boots for name in boot.get("numa_memtotal_kb", {})}, key=lambda n: int(n[4:]))
    head = ["boot", "NUMA MiB", "KASLR"] + ["%s MemTotal kB" % n for n in nodes] + ["total kB", "kernel image on", "change vs boot 1 (kB)", "boot to SSH (s)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first: Optional[Dict[str, int]] = None
    for boot in boots:
        memtotal = boot.get("numa_memtotal_kb", {})
        if first is None:
            first = memtotal
        change = ", ".join("%s %s" % (n, signed(memtotal.get(n, 0) - first.get(n, 0))) for n in nodes if memtotal.get(n, 0) != first.get(n, 0))
        row = [str(boot["boot"]), "/".join(str(m) for m in boot["numa_mib"]), "on" if boot.get("kaslr") else "off"]
        row += [kib(memtotal.get(n, 0)) for n in nodes]
        node = boot.get("kernel_image_node")
        row += [kib(sum(memtotal.values())), "node%s" % node if node is not None else "?", change or "none", str(boot.get("ssh_seconds", "?"))]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def render(paths: List[str]) -> str:
    out = []
    for path in paths:
        with open(path) as handle:
            vm = json.load(handle)
        out.append("### %s\n\n%s\n" % (vm["name"], table(vm)))
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("records", nargs="*")
    parser.add_argument("--vm-dir")
    parser.add_argument("--boots", type=int, default=0)
    args = parser.parse_args()
    paths = list(args.records)
    if args.vm_dir:
        for _boot in range(args.boots):
            subprocess.run([sys.executable, os.path.join(HERE, "qemu.py"), "reboot", "--vm-dir", args.vm_dir], check=True, stdout=subprocess.DEVNULL)
        paths.append(os.path.join(args.vm_dir, "vm.json"))
    sys.stdout.write(render(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
