# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubelet's checkpoint vectors from ``tests/fixtures`` (where each came from: tests/fixtures/README.md), for every test layer."""

from __future__ import annotations

import json
import os

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
VECTORS_FILE = os.environ.get(
    "NUMA_DRIFT_VECTORS", os.path.join(_REPO, "tests", "fixtures", "kubelet-checkpoints.json")
)

# The vectors' era names -> ours.
VECTOR_ERAS = {
    "kubelet<=1.35 (legacy)": "legacy",
    "kubelet1.36 PodLevelResourceManagers=false": "1.36-gate-off",
    "kubelet1.36 PodLevelResourceManagers=true": "1.36-gate-on",
    "kubelet1.37 (V3 reader)": "1.37",
}


def load_vectors():
    with open(VECTORS_FILE, encoding="utf-8") as handle:
        return json.load(handle)["vectors"]
