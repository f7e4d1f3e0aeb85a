# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""awx/configure.yml (the job templates, surveys, workflow and roles as code) against the awx.awx modules' own
argument specs, offline (tests/integration/awx_offline.py): the real playbook runs with ansible-playbook, every
awx.awx task's parameters go through the module's AnsibleModule, and what it would send is checked here. The
surveys (awx/surveys/*.json) are checked as AWX checks a survey spec, and against the variables the playbooks read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Dict, List

import pytest
import yaml

from ansible_collections.nodeops.numa_drift.tests.integration import awx_offline

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
AWX = os.path.join(CHECKOUT, "awx")
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
PREFIX = "NUMA drift — "
SITE = {
    "numa_drift_awx_organization": "Default",
    "numa_drift_awx_project": "nodeops-numa-drift",
    "numa_drift_awx_inventory": "NotReady nodes",
    "numa_drift_awx_credentials": ["node ssh", "cluster"],
    "numa_drift_awx_execution_environment": "numa-drift-ee",
    "numa_drift_awx_operators_team": "node-operators",
}


@pytest.fixture(scope="module", name="offline")
def offline_fixture(tmp_path_factory: pytest.TempPathFactory) -> str:
    return awx_offline.offline_collection(str(tmp_path_factory.mktemp("awx-offline")))


def configure(offline: str, site: Dict[str, Any], playbook: str = os.path.join(AWX, "configure.yml")) -> Dict[str, Any]:
    """ansible-playbook over the playbook with the offline awx.awx; its rc, output and each task's results by name."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=offline, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    completed = subprocess.run([ANSIBLE_PLAYBOOK, playbook, "-e", json.dumps(site)], env=env, check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    tasks: Dict[str, List[Dict[str, Any]]] = {}
    try:
        document = json.loads(completed.stdout[completed.stdout.index("{"):])
    except ValueError:
        document = {"plays": []}
    for play in document["plays"]:
        for task in play["tasks"]:
            result = task["hosts"].get("localhost", {})
            tasks[task["task"]["name"]] = result.get("results", [result])
    return {"rc": completed.returncode, "output": completed.stdout, "tasks": tasks}


def sent(run: Dict[str, Any], task: str) -> List[Dict[str, Any]]:
    """What each run of ``task`` would have sent to the controller (skipped runs left out)."""
    results = run["tasks"][task]
    assert all(not result.get("failed") for result in results), results
    return [result["offline_params"] for result in results if not result.get("skipped")]


def survey(name: str) -> Dict[str, Any]:
    with open(os.path.join(AWX, "surveys", name + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


def test_the_playbook_passes_the_awx_modules_argument_specs_and_creates_what_docs_awx_md_describes(offline: str) -> None:
    run = configure(offline, SITE)
    assert run["rc"] == 0, run["output"][-4000:]
    templates = {params["name"]: params for params in sent(run, "Create the job templates (probe, remediate, rollback, guard)")}
    assert sorted(templates) == sorted(PREFIX + name for name in ("probe", "remediate", "rollback", "guard"))
    for name, params in templates.items():
        kind = name[len(PREFIX):]
        assert params["playbook"] == "awx/%s.yml" % kind and os.path.isfile(os.path.join(CHECKOUT, params["playbook"]))
        assert (params["project"], params["inventory"], params["organization"]) == ("nodeops-numa-drift", "NotReady nodes", "Default")
        assert params["credentials"] == ["node ssh", "cluster"] and params["execution_environment"] == "numa-drift-ee"
        assert params["ask_limit_on_launch"] is True and params["job_slice_count"] == 1 and params["job_type"] == "run"
        # Only the read-only probe may run beside another job.
        assert params["allow_simultaneous"] is (kind == "probe"), name
        if kind == "probe":
            assert params["survey_enabled"] is False and params["survey_spec"] is None
        else:
            assert params["survey_enabled"] is True and params["survey_spec"] == survey(kind), name
            assert params["timeout"] == 7200

    workflow, = sent(run, "Create the workflow (probe, then an approval, then remediate)")
    assert workflow["name"] == PREFIX + "probe, approve, remediate" and workflow["allow_simultaneous"] is False
    nodes = {}
    for task in ("Add the workflow's remediate node (it repairs: the approval before it is the look first)",
                 "Add the workflow's approval node", "Add the workflow's probe node (the start)"):
        node, = sent(run, task)
        assert node["workflow_job_template"] == workflow["name"]
        nodes[node["identifier"]] = node
    assert nodes["probe"]["unified_job_template"] == PREFIX + "probe" and nodes["probe"]["success_nodes"] == ["approve"]
    assert nodes["approve"]["approval_node"]["timeout"] == 3600 and nodes["approve"]["success_nodes"] == ["remediate"]
    assert nodes["remediate"]["unified_job_template"] == PREFIX + "remediate"
    assert nodes["remediate"]["extra_data"] == {"remediate_dry_run": "false"}

    # The operators launch probe, rollback, guard and the workflow and approve it, but not remediate on its own.
    roles = sent(run, "Let the operators team launch probe, rollback and guard") + sent(run, "Let the operators team launch and approve the workflow")
    assert all(role["team"] == "node-operators" for role in roles)
    granted = {(role["role"], target) for role in roles for target in (role["job_templates"] or []) + (role["workflows"] or [])}
    assert granted == {("execute", PREFIX + "probe"), ("execute", PREFIX + "rollback"), ("execute", PREFIX + "guard"),
                       ("execute", workflow["name"]), ("approval", workflow["name"])}
    assert not sent(run, "Let the viewers team launch the probe")


def test_without_teams_no_role_is_granted_and_the_approval_timeout_is_yours(offline: str) -> None:
    site = {key: value for key, value in SITE.items() if key not in ("numa_drift_awx_operators_team", "numa_drift_awx_execution_environment")}
    run = configure(offline, dict(site, numa_drift_awx_viewers_team="node-viewers", numa_drift_awx_approval_timeout=600))
    assert run["rc"] == 0, run["output"][-4000:]
    assert all(params["execution_environment"] is None for params in sent(run, "Create the job templates (probe, remediate, rollback, guard)"))
    assert not sent(run, "Let the operators team launch probe, rollback and guard")
    viewers, = sent(run, "Let the viewers team launch the probe")
    assert (viewers["team"], viewers["role"], viewers["job_templates"]) == ("node-viewers", "execute", [PREFIX + "probe"])
    approval, = sent(run, "Add the workflow's approval node")
    assert approval["approval_node"]["timeout"] == 600


def test_missing_site_variables_fail_with_what_to_set(offline: str) -> None:
    run = configure(offline, {"numa_drift_awx_organization": "Default"})
    assert run["rc"] != 0
    assert "needs numa_drift_awx_organization, numa_drift_awx_project, numa_drift_awx_inventory" in run["output"]
    assert "Create the job templates (probe, remediate, rollback, guard)" not in run["tasks"]


def test_an_option_the_module_does_not_have_fails_the_check(offline: str, tmp_path) -> None:
    """The check can fail: a misspelled option, as awx.awx would refuse it against a controller."""
    shutil.copytree(AWX, str(tmp_path / "awx"))
    playbook = tmp_path / "awx" / "configure.yml"
    text = playbook.read_text(encoding="utf-8")
    assert "        ask_limit_on_launch: true\n" in text
    playbook.write_text(text.replace("        ask_limit_on_launch: true\n", "        ask_limit_on_lunch: true\n", 1), encoding="utf-8")
    run = configure(offline, SITE, str(playbook))
    assert run["rc"] != 0
    assert "Unsupported parameters" in run["output"] and "ask_limit_on_lunch" in run["output"], run["output"][-3000:]


def role_variables(role: str) -> List[str]:
    with open(os.path.join(CHECKOUT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    return [name for spec in specs.values() for name in spec.get("options", {})]


def playbook_variables(*playbooks: str) -> List[str]:
    """The numa_drift_* variables the playbooks (and their task files) read."""
    names = set()
    for pattern in playbooks:
        with open(os.path.join(CHECKOUT, "playbooks", pattern), encoding="utf-8") as handle:
            names.update(re.findall(r"\b(numa_drift_[a-z_]+)\b", handle.read()))
    return sorted(names)


@pytest.mark.parametrize("name, readers", [
    ("remediate", lambda: role_variables("remediate") + playbook_variables("remediate.yml", "tasks/rollout_gate.yml", "tasks/rollout_end.yml")),
    ("rollback", lambda: playbook_variables("rollback.yml")),
    ("guard", lambda: role_variables("guard") + playbook_variables("guard.yml")),
])
def test_each_survey_is_valid_for_awx_and_asks_only_what_its_playbook_reads(name: str, readers) -> None:
    spec = survey(name)
    assert spec["name"] and spec["description"] and spec["spec"]
    known = set(readers())
    variables = [question["variable"] for question in spec["spec"]]
    assert len(variables) == len(set(variables)), variables
    for question in spec["spec"]:
        # What AWX's survey spec validation requires (awx/api/views: SurveySpecView), per question.
        assert question["type"] in ("text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect"), question
        assert question["question_name"] and question["variable"] in known, question["variable"]
        default = question["default"]
        if question["type"] == "multiplechoice":
            assert default in question["choices"].split("\n"), question
        if question["type"] in ("text", "textarea") and default:
            assert question["min"] <= len(default) <= question["max"], question
        if question["type"] == "integer":
            assert isinstance(default, int) and question["min"] <= default <= question["max"], question
