# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One set of numbers: the cost figures the README and docs/awx.md quote are docs/fleet-scale.md's current ones."""

from __future__ import annotations

import os
import re

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def page(*parts: str) -> str:
    with open(os.path.join(CHECKOUT, *parts), encoding="utf-8") as handle:
        return " ".join(handle.read().split())


def playbook_row(name: str):
    """(CPU ms per host, x ping, minutes for 1,000 hosts) of fleet-scale.md's row of a playbook."""
    match = re.search(r"\| %s[^|]*\| ([\d,]+) ms \| \*{0,2}([\d.]+)\*{0,2} \| ([\d.]+) min \|" % re.escape(name), page("docs", "fleet-scale.md"))
    assert match, name
    return match.group(1), match.group(2), match.group(3)


def test_the_readme_and_the_awx_page_quote_fleet_scales_current_figures() -> None:
    probe_ms, probe_ratio, probe_minutes = playbook_row("`nodeops.numa_drift.probe`")
    _ms, in_sync_ratio, in_sync_minutes = playbook_row("`nodeops.numa_drift.remediate`, every node in sync")
    _ms, _ratio, ping_minutes = playbook_row("ping (one task)")
    readme, awx = page("README.md"), page("docs", "awx.md")
    assert "costs %sx of a one-task `ansible.builtin.ping` playbook's CPU per host" % probe_ratio in readme
    assert "%sx (60 local hosts" % in_sync_ratio in readme
    assert "a 1,000-host probe is about %s minutes of CPU on those 2 cores, ping %s" % (probe_minutes, ping_minutes) in readme
    assert "costs %s ms of CPU per host with pipelining, %sx of a one-task ping playbook" % (probe_ms, probe_ratio) in awx
    assert "a 1,000-host probe is about %s minutes of CPU with 2 cores busy" % probe_minutes in awx
    assert "1,000 nodes that need nothing about %s" % in_sync_minutes in awx
    assert "probe playbook costs %sx of a ping playbook per host" % probe_ratio in awx
    assert "hosts × %.2f s ÷ cores" % (int(probe_ms.replace(",", "")) / 1000.0) in awx
