# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the module tests: ``run`` drives a module's ``main()`` in-process (see utils.py)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.tests.support.module_runner import run_module


@pytest.fixture
def run(capsys):
    """``run(module, args, check_mode=False, diff_mode=False)`` -> the module's JSON result."""

    def _run(module, args, check_mode=False, diff_mode=False):
        return run_module(capsys, module, args, check_mode=check_mode, diff_mode=diff_mode)

    return _run
