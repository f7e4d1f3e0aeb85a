# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX execution environment: the definitions, the image built from them, a job run inside it.

``ansible-builder create`` writes the build context from execution-environment/execution-environment.yml
and ``ansible-builder introspect`` reads the collection's meta/execution-environment.yml the way a build
does; execution-environment/build.sh refuses, naming what to set, while the base image is the placeholder.
Then tests/integration/ee_build.py builds the image for real with docs/awx.md's command as written
(``EE_BASE_IMAGE=... bash execution-environment/build.sh``, on a debootstrap'd Debian base imported into
podman; cached by key) and the probe job template runs inside it through ansible-runner's process
isolation against the sandbox fleet. Where podman or root is missing the image tests are SKIPPED with
ee_build.py's reason.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
from typing import Any, Dict, Iterator

import pytest
import yaml

from ansible_collections.nodeops.numa_drift.tests.integration import awx_job
from ansible_collections.nodeops.numa_drift.tests.support.scenario import checkpoint_file

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILDER = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
EE_DIR = os.path.join(CHECKOUT, "execution-environment")
BUILD_LOCAL = os.path.join(CHECKOUT, "tests", "integration", "ee_build.py")


def builder(*args: str, cwd: str) -> str:
    completed = subprocess.run([BUILDER, *args], cwd=cwd, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert completed.returncode == 0, completed.stdout
    return completed.stdout


def requirement_names(lines) -> set:
    return {line.split("#")[0].strip().split(">")[0].split("=")[0].split("<")[0].strip().lower() for line in lines if line.split("#")[0].strip()}


def test_builder_creates_the_build_context_with_our_python_and_collection_requirements(tmp_path) -> None:
    context = tmp_path / "context"
    # The file name follows the container runtime found on PATH unless it is named (podman: Containerfile).
    builder("create", "-f", "execution-environment.yml", "-c", str(context), "--output-filename", "Dockerfile", cwd=EE_DIR)
    assert (context / "Dockerfile").is_file()
    with open(context / "_build" / "requirements.txt", encoding="utf-8") as handle:
        assert {"kubernetes", "jmespath"} <= requirement_names(handle)
    with open(context / "_build" / "requirements.yml", encoding="utf-8") as handle:
        collections = {entry["name"]: entry["type"] for entry in yaml.safe_load(handle)["collections"]}
    # Both collections from the build context (build.sh fills collections/): no Galaxy, and the tarball
    # named is the one `ansible-galaxy collection build` makes of this version.
    assert collections == {"collections/nodeops-numa_drift-%s.tar.gz" % galaxy_version(): "file", "collections/kubernetes.core": "dir"}
    with open(context / "Dockerfile", encoding="utf-8") as handle:
        assert 'ARG ANSIBLE_GALAXY_CLI_COLLECTION_OPTS="--offline"' in handle.read()


def galaxy_version() -> str:
    with open(os.path.join(CHECKOUT, "galaxy.yml"), encoding="utf-8") as handle:
        return yaml.safe_load(handle)["version"]


def build_sh(tmp_path: pathlib.Path, **env: str) -> subprocess.CompletedProcess:
    """execution-environment/build.sh of a copy of the definition, with ansible-galaxy and ansible-builder on PATH."""
    copy = tmp_path / "execution-environment"
    copy.mkdir()
    for name in ("build.sh", "execution-environment.yml", "requirements.txt", "requirements.yml"):
        shutil.copyfile(os.path.join(EE_DIR, name), copy / name)
    environ = {name: value for name, value in os.environ.items() if name != "EE_BASE_IMAGE"}
    environ.update(env, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(["bash", str(copy / "build.sh"), "-t", "numa-drift-ee:test"], check=False, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=environ, timeout=120)


def test_build_refuses_the_placeholder_base_image_saying_what_to_set(tmp_path) -> None:
    completed = build_sh(tmp_path)
    assert completed.returncode == 2, completed.stderr
    assert "no base image: set EE_BASE_IMAGE to an image of your registry with Python >= 3.12 and pip" in completed.stderr
    assert "images.base_image.name" in completed.stderr
    (tmp_path / "again").mkdir()
    placeholder = build_sh(tmp_path / "again", EE_BASE_IMAGE="registry.example.invalid/ansible/ee-base:latest")
    assert placeholder.returncode == 2 and "is a placeholder: set it to your base image" in placeholder.stderr, placeholder.stderr
    # Nothing was built or copied before the refusal.
    assert not (tmp_path / "execution-environment" / "collections").exists()


def test_builder_introspection_finds_the_collections_python_dependencies(tmp_path) -> None:
    link = tmp_path / "ansible_collections" / "nodeops" / "numa_drift"
    link.parent.mkdir(parents=True)
    link.symlink_to(CHECKOUT)
    output = builder("introspect", "--sanitize", str(tmp_path), cwd=str(tmp_path))
    data = yaml.safe_load(output.split("---", 1)[1])
    assert requirement_names(data["python"]) == {"kubernetes", "jmespath"}, data
    assert all("from collection nodeops.numa_drift" in line for line in data["python"])


def build_local() -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, BUILD_LOCAL], check=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=3600)


@pytest.fixture(scope="module")
def image() -> Dict[str, Any]:
    completed = build_local()
    if completed.returncode == 3:
        pytest.skip(completed.stdout.strip())
    assert completed.returncode == 0, completed.stdout + completed.stderr[-6000:]
    return json.loads(completed.stdout)


def podman_run(summary: Dict[str, Any], *command: str) -> str:
    env = dict(os.environ, CONTAINERS_CONF=summary["containers_conf"])
    completed = subprocess.run(["podman", "run", "--rm", "--network=none", summary["image"], *command], check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_built_image_holds_ansible_and_this_checkouts_collection(image: Dict[str, Any], tmp_path) -> None:
    assert image["collections"]["nodeops.numa_drift"] == galaxy_version()
    assert tuple(int(part) for part in image["collections"]["kubernetes.core"].split(".")[:2]) >= (5, 0)
    assert tuple(int(part) for part in image["ansible_core"].split(".")[:2]) >= (2, 19)
    assert image["ansible_runner"]
    # The collection in the image is this checkout's code, file for file: FILES.json (every file's
    # sha256) of the baked collection equals that of a build of the checkout now.
    project = tmp_path / "project"
    awx_job.copy_project(str(project))
    tarball = awx_job.build_collection(str(project), str(tmp_path / "built"))
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("FILES.json")
        assert member is not None
        expected = json.load(member)
    baked = json.loads(podman_run(image, "cat", "/usr/share/ansible/collections/ansible_collections/nodeops/numa_drift/FILES.json"))
    assert baked == expected
    # The Python packages the collection declares are importable there.
    assert podman_run(image, "python3", "-c", "import kubernetes, jmespath; print('ok')").strip() == "ok"


def test_unchanged_definition_reuses_the_cached_image(image: Dict[str, Any]) -> None:
    again = build_local()
    assert again.returncode == 0, again.stdout + again.stderr[-4000:]
    summary = json.loads(again.stdout)
    assert summary["image"] == image["image"] and summary["reused"] is True
    assert "ansible_builder" not in summary["seconds"] and "debootstrap" not in summary["seconds"], summary["seconds"]


@pytest.fixture(scope="module")
def ee_job(image: Dict[str, Any], tmp_path_factory, control_plane, service_account, service_account_token) -> Iterator[awx_job.SandboxJob]:
    """The mixed fleet on the session's real kube-apiserver (the container reaches it on the host's loopback);
    the credential is the shipped ServiceAccount's token."""
    job = awx_job.SandboxJob(str(tmp_path_factory.mktemp("ee-job")), image=awx_job.Image(image), api=awx_job.RealApi(
        control_plane.server, control_plane.admin_token, control_plane.ca_file, service_account, service_account_token))
    try:
        yield job
    finally:
        job.down()


def read_bytes(path: str) -> Any:
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return handle.read()


def test_probe_job_template_runs_inside_the_built_image(image: Dict[str, Any], ee_job: awx_job.SandboxJob) -> None:
    before = {name: read_bytes(checkpoint_file(node["root"])) for name, node in ee_job.nodes.items()}
    result = ee_job.pdd.run("probe-ee", "awx/probe.yml", {})
    assert (result.status, result.rc) == ("successful", 0), result.runner_output[-4000:] + result.stdout[-4000:]
    # ansible-runner started the job in the image with podman (what it records as the job's command).
    with open(os.path.join(result.artifacts, "command"), encoding="utf-8") as handle:
        command = json.load(handle)["command"]
    assert command[0] == "podman" and command[1] == "run" and image["image"] in command, command
    verdicts = {host: res["numa_drift"]["verdict"] for host, res in result.host_results("nodeops.numa_drift.numa_drift_facts").items()}
    assert verdicts == {name: node["expected_verdict"] for name, node in ee_job.nodes.items()}
    with open(os.path.join(ee_job.pdd.dir, "reports", "probe-ee", "report.json"), encoding="utf-8") as handle:
        assert {row["node"] for row in json.load(handle)["nodes"]} == set(ee_job.nodes)
    assert {name: read_bytes(checkpoint_file(node["root"])) for name, node in ee_job.nodes.items()} == before
