# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The awx/ job templates run the way AWX runs them: ansible-runner on a private data directory.

The directory is laid out by tests/integration/awx_job.py as AWX lays it out (project, installed
collections, the inventory the k8s_nodes source found, env/extravars from the survey defaults of
awx/surveys/, env/envvars from the bearer-token credential, the machine credential's key and
command line) and the jobs run against the sandbox fleet (mixed scenario) on the session's real
kube-apiserver, the credential being the shipped ServiceAccount's token. Tests share the fleet and
run in file order: the rollback restores what the remediate job repaired.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict, Iterator

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.tests.integration import awx_job
from ansible_collections.nodeops.numa_drift.tests.support.scenario import checkpoint_file

REPAIRED = "sbx-node-01"


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


class Job(awx_job.SandboxJob):
    def __init__(self, directory: str, api: awx_job.RealApi) -> None:
        super().__init__(directory, api=api)
        self.originals = {name: self.checkpoint(name) for name in self.nodes}

    def checkpoint(self, name: str) -> Any:
        path = checkpoint_file(self.nodes[name]["root"])
        return read_bytes(path) if os.path.exists(path) else None


@pytest.fixture(scope="module")
def job(tmp_path_factory, control_plane, service_account, service_account_token) -> Iterator[Job]:
    """The mixed fleet on the session's real kube-apiserver; the credential is the shipped ServiceAccount's token."""
    built = Job(str(tmp_path_factory.mktemp("awx-job")), api=awx_job.RealApi(
        control_plane.server, control_plane.admin_token, control_plane.ca_file, service_account, service_account_token))
    try:
        yield built
    finally:
        built.down()


def test_private_data_dir_is_laid_out_as_awx_lays_it_out(job: Job) -> None:
    pdd = job.pdd.dir
    for relative in ("project/awx/probe.yml", "project/awx/remediate.yml", "project/awx/rollback.yml", "inventory/hosts",
                     "env/envvars", "env/settings", "env/ssh_key",
                     "requirements_collections/ansible_collections/nodeops/numa_drift/MANIFEST.json"):
        assert os.path.exists(os.path.join(pdd, relative)), relative
    with open(os.path.join(pdd, "env", "envvars"), encoding="utf-8") as handle:
        envvars = json.load(handle)
    assert envvars["K8S_AUTH_HOST"] == job.fleet["api"]["url"] and envvars["K8S_AUTH_API_KEY"] == job.fleet["token"]
    assert envvars["K8S_AUTH_VERIFY_SSL"] == "False"
    # The inventory is what the k8s_nodes source found through the API: every Node, grouped by readiness.
    listed = json.loads(subprocess.run([os.path.join(pdd, "inventory", "hosts"), "--list"], check=True, stdout=subprocess.PIPE).stdout)
    assert set(listed["_meta"]["hostvars"]) == set(job.nodes)
    assert set(listed["notready"]["hosts"]) >= {REPAIRED, "sbx-node-06", "sbx-node-07"}
    assert "sbx-node-04" in listed["ready"]["hosts"]
    assert "remediate_kubeconfig" not in json.dumps(listed), "the API must be reached through the credential's K8S_AUTH_*"


def test_probe_job_template(job: Job) -> None:
    result = job.pdd.run("probe", "awx/probe.yml", {})
    assert (result.status, result.rc) == ("successful", 0), result.stdout[-4000:]
    verdicts = {host: res["numa_drift"]["verdict"] for host, res in result.host_results("nodeops.numa_drift.numa_drift_facts").items()}
    assert verdicts == {name: node["expected_verdict"] for name, node in job.nodes.items()}
    report = os.path.join(job.pdd.dir, "reports", "probe", "report.json")
    with open(report, encoding="utf-8") as handle:
        assert {row["node"] for row in json.load(handle)["nodes"]} == set(job.nodes)
    assert all(job.checkpoint(name) == job.originals[name] for name in job.nodes)


def test_remediate_job_template_with_the_survey_defaults_is_a_dry_run(job: Job) -> None:
    result = job.pdd.run("remediate-defaults", "awx/remediate.yml", dict(awx_job.REMEDIATE_SURVEY_DEFAULTS))
    assert (result.status, result.rc) == ("successful", 0), result.stdout[-4000:]
    assert all(job.checkpoint(name) == job.originals[name] for name in job.nodes), "the survey's dry run changed a checkpoint"


def test_remediate_job_template_repairs_when_the_dry_run_is_answered_false(job: Job) -> None:
    answers: Dict[str, Any] = dict(awx_job.REMEDIATE_SURVEY_DEFAULTS, remediate_dry_run="false")
    result = job.pdd.run("remediate", "awx/remediate.yml", answers, limit=REPAIRED)
    assert (result.status, result.rc) == ("successful", 0), result.stdout[-4000:]
    assert probe(HostFiles(job.nodes[REPAIRED]["root"])).assessment.verdict == "in_sync"
    assert all(job.checkpoint(name) == job.originals[name] for name in job.nodes if name != REPAIRED)


def test_rollback_job_template_refuses_without_confirmation_then_restores(job: Job) -> None:
    repaired = job.checkpoint(REPAIRED)
    assert repaired != job.originals[REPAIRED], "needs the repair of the previous test"
    refused = job.pdd.run("rollback-defaults", "awx/rollback.yml", dict(awx_job.ROLLBACK_SURVEY_DEFAULTS), limit=REPAIRED)
    assert refused.status == "failed" and refused.rc != 0
    assert "numa_drift_rollback_confirm=true" in refused.stdout
    assert job.checkpoint(REPAIRED) == repaired
    restored = job.pdd.run("rollback", "awx/rollback.yml", {"numa_drift_rollback_confirm": "true"}, limit=REPAIRED)
    assert (restored.status, restored.rc) == ("successful", 0), restored.stdout[-4000:]
    assert job.checkpoint(REPAIRED) == job.originals[REPAIRED]


def survey_defaults(name: str) -> Dict[str, Any]:
    """The defaults of awx/surveys/<name>.json (what a user imports into AWX, and what awx/configure.yml sets)."""
    with open(os.path.join(awx_job.CHECKOUT, "awx", "surveys", name + ".json"), encoding="utf-8") as handle:
        spec = json.load(handle)["spec"]
    return {question["variable"]: question["default"] for question in spec}


def test_the_jobs_answer_exactly_the_survey_defaults() -> None:
    assert awx_job.REMEDIATE_SURVEY_DEFAULTS == survey_defaults("remediate")
    assert awx_job.ROLLBACK_SURVEY_DEFAULTS == survey_defaults("rollback")
