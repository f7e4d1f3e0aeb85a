# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_policy/verdicts.py: the verdict vocabulary is the one docs/modules.md documents, in
its order, with the one verdict a repair fixes and those that need nothing; the advice for a repairable node."""

from __future__ import annotations

import os
import re

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.verdicts import (
    NOTHING_TO_DO,
    REMEDIATE_PLAYBOOK,
    REPAIRABLE,
    TOLERATED,
    VERDICTS,
    remediate_advice,
)

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))


def documented_verdicts():
    """``[(verdict, what kubelet_mm_checkpoint state=repaired does)]`` from the table of docs/modules.md "Verdicts"."""
    with open(os.path.join(CHECKOUT, "docs", "modules.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("\n## Verdicts\n", 1)[1].split("\n## ", 1)[0]
    return [(match.group(1), match.group(2).strip()) for match in re.finditer(r"^\| `([a-z_]+)` \|.*\| ([^|]+) \|$", section, re.M)]


def test_the_vocabulary_is_the_documented_one_in_its_order():
    # The verdict is the first cause in this order (kubelet's restore order, exact fields, then the bound).
    assert tuple(verdict for verdict, _action in documented_verdicts()) == VERDICTS
    assert len(set(VERDICTS)) == len(VERDICTS)


def test_one_verdict_is_repaired_and_the_documented_ones_need_nothing():
    actions = dict(documented_verdicts())
    assert [verdict for verdict, action in actions.items() if action == "**repairs**"] == [REPAIRABLE] == ["drift_within_bound"]
    assert sorted(verdict for verdict, action in actions.items() if action == "nothing to do") == sorted(NOTHING_TO_DO)
    assert TOLERATED == "kubelet_tolerates" and TOLERATED in NOTHING_TO_DO and REPAIRABLE not in NOTHING_TO_DO
    # kubelet_tolerates stands where drift_within_bound would: the last two of the order.
    assert VERDICTS[-2:] == (REPAIRABLE, TOLERATED)


def test_the_advice_names_the_remediate_playbook_limited_to_the_hosts():
    advice = remediate_advice("node-7,node-9")
    assert REMEDIATE_PLAYBOOK == "nodeops.numa_drift.remediate"
    assert "ansible-playbook -i INVENTORY nodeops.numa_drift.remediate --limit node-7,node-9" in advice
    # What the playbook does around the write, in its order.
    assert re.search(r"cordons.*stops kubelet.*repairs the checkpoint.*starts kubelet.*waits for Ready.*uncordons", advice)
    assert "--limit NODE " in remediate_advice()
