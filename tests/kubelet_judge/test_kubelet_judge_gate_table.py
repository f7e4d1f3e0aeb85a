# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The feature gate tables the probe refuses a configuration by (``_kubelet/gate_dependencies.py``: dependencies,
specs and locked gates per release) are the ones ``scripts/gate_dependencies.py`` reads from kubelet's own sources
at the judged releases, the sources the judges were built from: a table left behind a change of releases, or edited
by hand, fails here.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy

import pytest

from ansible_collections.nodeops.numa_drift.tests.kubelet_judge import build

SCRIPT = os.path.join(build.CHECKOUT, "scripts", "gate_dependencies.py")
TABLE = os.path.join(build.CHECKOUT, "plugins", "module_utils", "_kubelet", "gate_dependencies.py")


def test_the_gate_tables_are_generated_from_the_judged_releases_sources(judges, monkeypatch):
    assert judges  # built: kubelet's sources at every judged release are in the Go module cache
    go = build.find_go((1, 26))
    monkeypatch.setenv("GOMODCACHE", build.run_go(go, ["env", "GOMODCACHE"], build.CHECKOUT, build.go_env("")).strip())
    script = runpy.run_path(SCRIPT)
    assert tuple(script["RELEASES"]) == build.RELEASES, "scripts/gate_dependencies.py reads other releases than the judges build"
    missing = [release for release in build.RELEASES
               if not os.path.isfile(os.path.join(script["MODCACHE"], "kubernetes@%s" % release, "pkg/features/kube_features.go"))]
    if missing:
        pytest.fail("kubelet's sources of %s are not in %s" % (", ".join(missing), script["MODCACHE"]), pytrace=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert script["main"]() == 0
    with open(TABLE, encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == printed.getvalue(), "re-generate: python scripts/gate_dependencies.py > plugins/module_utils/_kubelet/gate_dependencies.py"
