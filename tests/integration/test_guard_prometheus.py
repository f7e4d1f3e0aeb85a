# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The alerting rules with the real promtool, and the guard's metrics read back through a real node exporter.

promtool (Debian package prometheus) and prometheus-node-exporter are installed by
tests/integration/requirements.sh from the unit stage; these tests fail, not skip, without them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request

from ansible_collections.nodeops.numa_drift.plugins.module_utils._policy import drift as _drift
from ansible_collections.nodeops.numa_drift.plugins.module_utils._guard import program as _guard
from ansible_collections.nodeops.numa_drift.tests.support.scenario import GIB, KIB, guaranteed_pods, two_node_boot, write_kubelet_node

HERE = os.path.dirname(os.path.abspath(__file__))
RULES_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "extensions", "prometheus")
MISSING = "%s is missing: run bash tests/integration/requirements.sh"


def tool(name):
    found = shutil.which(name)
    assert found, MISSING % name
    return found


def test_promtool_check_rules():
    done = subprocess.run([tool("promtool"), "check", "rules", "nodeops-numa-drift.rules.yml"], cwd=RULES_DIR, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0 and "SUCCESS: 3 rules found" in done.stdout, done.stdout + done.stderr


def test_promtool_test_rules():
    done = subprocess.run([tool("promtool"), "test", "rules", "rules_test.yml"], cwd=RULES_DIR, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr


def free_port():
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return probe_socket.getsockname()[1]


def scrape(url, deadline):
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode("utf-8")
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_node_exporter_serves_the_guards_metrics(tmp_path):
    before = two_node_boot()
    root = write_kubelet_node(str(tmp_path / "node"), before, before.moved(node0=-GIB // KIB), pods=guaranteed_pods(2, (0,)))
    assert _guard.main(["--root", root]) == 0
    textfile_dir = os.path.join(root, _guard.DEFAULT_TEXTFILE_DIR.lstrip("/"))
    port = free_port()
    exporter = subprocess.Popen(  # pylint: disable=consider-using-with
        [tool("prometheus-node-exporter"), "--web.listen-address=127.0.0.1:%d" % port, "--collector.disable-defaults",
         "--collector.textfile", "--collector.textfile.directory=" + textfile_dir],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        text = scrape("http://127.0.0.1:%d/metrics" % port, time.monotonic() + 30)
    finally:
        exporter.terminate()
        exporter.wait(timeout=30)
    lines = text.splitlines()
    assert 'nodeops_numa_drift_verdict{verdict="drift_exceeds_bound"} 1' in lines
    for verdict in _drift.VERDICTS:
        if verdict != "drift_exceeds_bound":
            assert 'nodeops_numa_drift_verdict{verdict="%s"} 0' % verdict in lines
    # The exporter re-renders values in Go's float format.
    assert 'nodeops_numa_drift_memory_drift_bytes{numa_node="0",resource="memory"} -1.073741824e+09' in lines
    assert 'node_textfile_scrape_error 0' in lines
