# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A hostile node never reaches the operator's browser: every node-supplied string of the report holds markup.

The collection's own report tasks (playbooks/tasks/fleet_report.yml, as the probe and remediate playbooks run
them) write report.html for a fleet whose outcomes carry markup in every string a node supplies: the boot
guard's state (time, verdict, action, message), verdicts, actions, messages, causes and advice, node, pod,
namespace and container names, pod UIDs, the distribution and service, checkpoint and backup paths, the
bound's source. The page, opened in headless Chromium, must run no script, create no element from the
markup, and show every payload as text.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration import browser
from ansible_collections.nodeops.numa_drift.tests.integration.test_fleet_sandbox import (  # noqa: F401  # pylint: disable=unused-import
    ANSIBLE_PLAYBOOK,
    CHECKOUT,
    collections_path,
)

CHROMIUM = browser.find_chromium()

pytestmark = [
    pytest.mark.skipif(not os.path.exists(ANSIBLE_PLAYBOOK), reason="needs the checkout's .venv"),
    # On CI the browser is installed by tests/integration/requirements.sh: missing there is a failure, not a skip.
    pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"), reason="SKIPPED: no chromium (apt-get install chromium)"),
]


def payload(field: str) -> str:
    """Markup that would run script, load an image and add an element if it reached the page unescaped."""
    return ('<script>window.pwned=(window.pwned||[]).concat(["%s"])</script>'
            '<img src="data:," onerror="window.pwned=(window.pwned||[]).concat([\'img-%s\'])">'
            '<b class="injected">%s</b>"\'&' % (field, field, field))


def hostile_outcome(tag: str, action: str) -> Dict[str, Any]:
    """One node's outcome record (as the probe and remediate role record it) with markup in every node string."""
    def p(field: str) -> str:
        return payload("%s-%s" % (tag, field))

    uid = p("uid")
    numa_node = {"node": 0, "holds_kernel_image": True,
                 "memory": {"recorded_total": 64 << 30, "current_total": (64 << 30) - (44 << 20), "delta_total": -(44 << 20),
                            "delta_allocatable": -(44 << 20)},
                 "hugepages": {}}
    return {
        "node": p("node"),
        "action": action if action else p("action"),
        "verdict_before": p("verdict_before"),
        "verdict_after": p("verdict_after"),
        "message": p("message"),
        "summary": p("summary"),
        "cordoned_by_us": False,
        "cordoned_before": True,
        "backup_file": p("backup_file"),
        "service": p("service"),
        "numa_drift": {
            "verdict": p("verdict"),
            "repairable": False,
            "causes": [{"verdict": p("verdict_after"), "message": p("cause")}],
            "advice": p("advice"),
            "summary": p("facts_summary"),
            "bound_bytes": 96 << 20,
            "bound_source": p("bound_source"),
            "nodes": [numa_node],
            "kernel_image": {"unknown_reason": p("kernel_reason")},
            "checkpoint": {"path": p("checkpoint_path"), "layout": p("layout"), "pods": 1, "blocks": 1,
                           "pinned_pods": [{"uid": uid, "containers": [{"name": p("container")}], "numa_nodes": [0],
                                            "sizes": {"memory": 1 << 30}}]},
            "kubelet": {"distribution": p("distribution"), "service": p("kubelet_service"), "config_path": p("config_path")},
            "guard": {"installed": True, "verdict": p("guard_verdict"), "action": p("guard_action"),
                      "message": p("guard_message"), "time": p("guard_time"), "boot_id": p("boot_id")},
        },
    }


def probe_records(outcomes: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """What the probe playbook leaves on each host for the same nodes: its registered probe result (the facts; the
    reader's failure message for a failed or unreachable node) and the Node's name."""
    records = {}
    for host, outcome in outcomes.items():
        if outcome["action"] == "refused":
            result = {"changed": False, "numa_drift": outcome["numa_drift"]}
        elif outcome["action"] == "failed":
            result = {"failed": False, "msg": outcome["message"]}  # failed_when: false, as the playbook registers it
        else:
            result = {"unreachable": True, "msg": outcome["message"]}
        records[host] = {"remediate_probe": result, "remediate_node_name": outcome["node"]}
    return records


def run_report(tmp_path: Any, collections: str, kind: str, outcomes: Dict[str, Dict[str, Any]], pods: Dict[str, Any]) -> str:
    """The collection's report tasks over hosts whose outcomes are ``outcomes`` (for the probe, the probe results of
    the same nodes: :func:`probe_records`); the report directory."""
    report_dir = tmp_path / ("report-" + kind)
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("[nodes]\n" + "".join("%s ansible_connection=local\n" % host for host in outcomes), encoding="utf-8")
    data = tmp_path / "outcomes.json"
    records = probe_records(outcomes) if kind == "probe" else {host: {"remediate_outcome": outcome} for host, outcome in outcomes.items()}
    data.write_text(json.dumps({"hostile_records": records, "hostile_pods": pods}), encoding="utf-8")
    # Laid out as the collection's playbooks are (tasks/ and templates/ beside the playbook), so the report
    # tasks find whatever they use, as from playbooks/probe.yml.
    for name in ("tasks", "templates"):
        os.symlink(os.path.join(CHECKOUT, "playbooks", name), str(tmp_path / name))
    playbook = tmp_path / "report.yml"
    playbook.write_text("""---
- name: Hostile outcomes, as the probe and remediate plays leave them
  hosts: nodes
  gather_facts: false
  tasks:
    - name: Record the outcome (remediate) or the probe's result (probe)
      ansible.builtin.set_fact:
        "{{ item.key }}": "{{ item.value }}"
      loop: "{{ hostile_records[inventory_hostname] | dict2items }}"
    - name: Pod names the API would have given
      ansible.builtin.set_fact:
        numa_drift_report_pods: "{{ hostile_pods }}"
      delegate_to: localhost
      delegate_facts: true
      run_once: true

- name: Write the fleet report
  hosts: nodes
  gather_facts: false
  vars:
    numa_drift_report_kind: %s
    numa_drift_report_hosts: "{{ ansible_play_hosts_all }}"
    numa_drift_report_pod_names: false
  tasks:
    - name: Write report.json and report.html
      ansible.builtin.include_tasks: tasks/fleet_report.yml
""" % kind, encoding="utf-8")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_NOCOLOR="1")
    done = subprocess.run([ANSIBLE_PLAYBOOK, "-i", str(inventory), str(playbook), "-e", "@%s" % data,
                           "-e", "numa_drift_report_dir=%s" % report_dir], capture_output=True, text=True, env=env,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    return str(report_dir)


LOOK = r"""
(() => ({
  pwned: window.pwned || [],
  injected: document.querySelectorAll('.injected, script, img').length,
  text: document.body.innerText,
  title: document.title,
}))()
"""


# Every node-supplied string the page shows (a refused node's message is replaced by its advice, so each
# field is looked for on any of the three nodes).
FIELDS = ("node", "action", "verdict_before", "verdict_after", "message", "advice", "backup_file", "service", "cause",
          "bound_source", "kernel_reason", "checkpoint_path", "layout", "uid", "container", "distribution", "config_path",
          "guard_verdict", "guard_action", "guard_message", "guard_time", "pod_name", "pod_namespace")
# The probe's rows come from the node's facts and the reader's messages (the action is the playbook's own, and a
# probe has no backup): its verdicts are the facts' ``verdict``, its service the one the facts discovered.
PROBE_FIELDS = tuple(field for field in FIELDS if field not in ("action", "verdict_before", "verdict_after", "backup_file", "service")) + (
    "verdict", "kubelet_service", "facts_summary")


@pytest.mark.parametrize("kind", ["probe", "remediate"])
def test_markup_from_every_node_string_is_shown_as_text_and_never_runs(tmp_path: Any, collections_path: str, kind: str) -> None:  # noqa: F811  # pylint: disable=redefined-outer-name
    outcomes = {"hostile-1": hostile_outcome("n1", "refused"), "hostile-2": hostile_outcome("n2", "failed"),
                "hostile-3": hostile_outcome("n3", "")}
    pods = {}
    for tag, outcome in (("n1", outcomes["hostile-1"]), ("n2", outcomes["hostile-2"]), ("n3", outcomes["hostile-3"])):
        for pod in outcome["numa_drift"]["checkpoint"]["pinned_pods"]:
            pods[pod["uid"]] = {"name": payload(tag + "-pod_name"), "namespace": payload(tag + "-pod_namespace"), "qos": "Guaranteed"}
    report_dir = run_report(tmp_path, collections_path, kind, outcomes, pods)
    html_path = os.path.join(report_dir, "report.html")
    with open(html_path, encoding="utf-8") as handle:
        html = handle.read()
    assert "<script" not in html.lower() and "<img" not in html.lower() and 'class="injected"' not in html
    assert CHROMIUM, "chromium is not installed (tests/integration/requirements.sh installs it)"
    with browser.opened(CHROMIUM, html_path) as page:
        seen = page.evaluate(LOOK)
        details = browser.open_details(page)
        shown = page.evaluate("document.body.innerText")
    assert seen["pwned"] == [] and seen["injected"] == 0, seen
    # The text shows: each payload as its characters, in the page or in a row's details.
    text = shown + "\n".join(entry["text"] for entry in details)
    fields = PROBE_FIELDS if kind == "probe" else FIELDS
    missing = [field for field in fields if not any(payload("%s-%s" % (tag, field)) in text for tag in ("n1", "n2", "n3"))]
    assert missing == [], missing
    assert payload("n1-guard_time") in seen["text"]  # the guard's line is on the page itself, not in the details


def test_the_check_catches_a_page_that_does_not_escape(tmp_path: Any) -> None:
    """The browser checks above can fail: the same payload, unescaped, runs and adds its element."""
    path = tmp_path / "unescaped.html"
    path.write_text("<!DOCTYPE html><html><body><p>%s</p></body></html>" % payload("raw"), encoding="utf-8")
    assert CHROMIUM, "chromium is not installed (tests/integration/requirements.sh installs it)"
    with browser.opened(CHROMIUM, str(path)) as page:
        seen = page.evaluate(LOOK)
    assert "raw" in seen["pwned"] and seen["injected"] >= 1, seen
