# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An AWX job's private data directory, laid out as AWX lays it out, run with ansible-runner.

AWX (and automation controller) runs every job as ``ansible-runner run <private data dir> -p
<playbook>``, inside the job's execution environment. What it writes into that directory:

- ``project/``: a copy of the project at the job's revision (here: the checkout's files).
- ``requirements_collections/``: the collections of the project's ``collections/requirements.yml``
  installed at project sync; AWX puts the path on ``ANSIBLE_COLLECTIONS_PATHS`` (here: this
  collection built with ``ansible-galaxy collection build`` and installed from the tarball, as a
  Git/Galaxy install would; ``kubernetes.core`` comes from the ``ansible`` package beside
  ansible-core, as in an execution environment that has it).
- ``inventory/hosts``: the job's inventory as a script printing the inventory JSON; AWX stores
  what the inventory source (``*.k8s_nodes.yml`` run through ``ansible-inventory --list`` with the
  source's credential) found, plus the host variables set in AWX.
- With an execution environment image (``Image``), the job runs as AWX runs it on an execution node:
  ansible-runner's process isolation starts the image with podman, the private data dir mounted at
  ``/runner``; the collections are the image's (as with *Enable Collection(s) Download* off), the
  host variables name the image's Python, and ``NUMA_DRIFT_REPORT_DIR`` points into ``/runner``.
- ``env/extravars``: the survey answers (here the defaults of the surveys in awx/surveys/) and the
  template's extra variables; ``env/envvars``: what the credentials inject (the bearer-token
  credential: ``K8S_AUTH_HOST``, ``K8S_AUTH_API_KEY``, ``K8S_AUTH_VERIFY_SSL``); ``env/ssh_key``
  and ``env/cmdline`` (``-u``, ``--become-method``): the machine credential; ``env/settings``.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import stat
import subprocess
import sys
from typing import Any, Dict, List, Optional

import yaml

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
FLEET = os.path.join(CHECKOUT, "tests", "sandbox", "fleet.py")

# The survey defaults of awx/surveys/ (answers arrive as strings for multiple choice questions).
REMEDIATE_SURVEY_DEFAULTS = {
    "remediate_drift_bound": "auto",
    "numa_drift_batch": "25%",
    "numa_drift_max_fail_percentage": 0,
    "remediate_drain": "false",
    "numa_drift_lock_wait_timeout": 0,
    "numa_drift_pause_configmap": "",
    "numa_drift_max_unhealthy": "",
    "numa_drift_prometheus_url": "",
    "numa_drift_alert_filter_regexp": ".*",
    "numa_drift_webhook_url": "",
    "remediate_dry_run": "true",
    "numa_drift_fail_on_refused": "false",
}
ROLLBACK_SURVEY_DEFAULTS = {"numa_drift_rollback_confirm": "false"}
MACHINE_USER = "numa-drift"


def tool(name: str) -> str:
    found = os.path.join(VENV_BIN, name)
    return found if os.access(found, os.X_OK) else (shutil.which(name) or found)


def project_files() -> List[str]:
    """Tracked and untracked-but-not-ignored files: what a project sync of this revision would hold."""
    listed = subprocess.run(["git", "-C", CHECKOUT, "ls-files", "-co", "--exclude-standard", "-z"], check=True,
                            stdout=subprocess.PIPE).stdout.decode("utf-8").split("\0")
    return [name for name in listed if name and os.path.isfile(os.path.join(CHECKOUT, name))]


def copy_project(destination: str) -> None:
    for name in project_files():
        target = os.path.join(destination, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(CHECKOUT, name), target)


def build_collection(project: str, output: str) -> str:
    """``ansible-galaxy collection build`` of the project copy; the tarball's path."""
    subprocess.run([tool("ansible-galaxy"), "collection", "build", "--force", "--output-path", output, project], check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return sorted(glob.glob(os.path.join(output, "nodeops-numa_drift-*.tar.gz")))[-1]


def install_collection(tarball: str, collections: str) -> None:
    env = dict(os.environ, ANSIBLE_GALAXY_DISABLE_GPG_VERIFY="1")
    subprocess.run([tool("ansible-galaxy"), "collection", "install", "--offline", "--no-deps", "-p", collections, tarball], check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, env=env)


def inventory_from_source(source_dir: str, api_url: str, token: str, collections: str) -> Dict[str, Any]:
    """What AWX's inventory update stores: the k8s_nodes source of the project, run with the credential."""
    with open(os.path.join(CHECKOUT, "examples", "notready.k8s_nodes.yml"), encoding="utf-8") as handle:
        source = yaml.safe_load(handle)
    source["readiness"] = "all"  # the "whole cluster" inventory of docs/awx.md
    os.makedirs(source_dir, exist_ok=True)
    path = os.path.join(source_dir, "cluster.k8s_nodes.yml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump(source, handle)
    env = {name: value for name, value in os.environ.items() if not name.startswith(("ANSIBLE_", "K8S_AUTH_"))}
    env.update(credential_env(api_url, token), ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_INVENTORY_UNPARSED_FAILED="True",
               ANSIBLE_HOME=os.path.join(source_dir, "ansible-home"))
    completed = subprocess.run([tool("ansible-inventory"), "-i", path, "--list"], check=False, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    if completed.returncode != 0:
        raise AssertionError("inventory update failed:\n%s\n%s" % (completed.stdout, completed.stderr))
    return json.loads(completed.stdout)


def credential_env(api_url: str, token: str) -> Dict[str, str]:
    """The env the built-in "OpenShift or Kubernetes API Bearer Token" credential injects (no CA data)."""
    return {"K8S_AUTH_HOST": api_url, "K8S_AUTH_API_KEY": token, "K8S_AUTH_VERIFY_SSL": "False"}


def inventory_script(path: str, inventory: Dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("#!/usr/bin/env python3\n# Generated like AWX's job inventory script.\nimport json, sys\n")
        handle.write("INVENTORY = %s\n" % json.dumps(json.dumps(inventory)))
        handle.write("if len(sys.argv) > 1 and sys.argv[1] == '--host':\n    print('{}')\nelse:\n    print(INVENTORY)\n")
    os.chmod(path, stat.S_IRWXU)


class Image:
    """An execution environment image built by tests/integration/ee_build.py (its JSON summary)."""

    def __init__(self, summary: Dict[str, Any]) -> None:
        self.tag = summary["image"]
        self.containers_conf = summary["containers_conf"]
        self.python = "/usr/bin/python3"

    def runner_options(self, mounts: List[str]) -> List[str]:
        """ansible-runner's process isolation with podman, as AWX configures it for a job."""
        options = ["--process-isolation", "--process-isolation-executable", "podman", "--container-image", self.tag]
        for mount in mounts:
            options += ["--container-volume-mount", "%s:%s" % (mount, mount)]
        # --network=host: the sandbox API listens on the host's 127.0.0.1. --user=0: the private data
        # dir belongs to the launching user (root here), as rootless podman's keep-id maps it on an
        # AWX execution node; the image's default user 1000 could not write /runner/artifacts.
        options += ["--container-option=--network=host", "--container-option=--user=0"]
        return options


class PrivateDataDir:
    """One job's private data directory; ``run`` is ansible-runner, like AWX's dispatcher calls it."""

    def __init__(self, directory: str, fleet: Dict[str, Any], fleet_inventory: Dict[str, Any], collections_source: str,
                 image: Optional[Image] = None) -> None:
        self.dir = directory
        self.fleet = fleet
        self.image = image
        os.makedirs(directory)
        self.project = os.path.join(directory, "project")
        copy_project(self.project)
        self.collections = os.path.join(directory, "requirements_collections")
        if image is None:
            install_collection(build_collection(self.project, os.path.join(directory, "artifacts-build")), self.collections)
        found = inventory_from_source(os.path.join(directory, "inventory-update"), fleet["api"]["url"], fleet["token"], collections_source)
        # Host variables an operator set in AWX for these hosts (how each sandbox node is reached:
        # the local connection to its node tree, its service commands), merged as AWX merges them.
        sandbox = fleet_inventory["all"]["children"]["sandbox"]
        hostvars = found.setdefault("_meta", {}).setdefault("hostvars", {})
        for name, variables in sandbox["hosts"].items():
            hostvars.setdefault(name, {}).update(variables)
            if image is not None:
                hostvars[name]["ansible_python_interpreter"] = image.python
        found.setdefault("all", {}).setdefault("vars", {})
        found["all"]["vars"] = {name: value for name, value in sandbox["vars"].items() if name != "remediate_kubeconfig"}
        self.inventory = found
        os.makedirs(os.path.join(directory, "inventory"))
        inventory_script(os.path.join(directory, "inventory", "hosts"), found)
        self.env_dir = os.path.join(directory, "env")
        os.makedirs(self.env_dir)
        key = os.path.join(directory, "machine-key")
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "awx machine credential", "-f", key], check=True)
        shutil.copy(key, os.path.join(self.env_dir, "ssh_key"))
        self.envvars = dict(credential_env(fleet["api"]["url"], fleet["token"]),
                            ANSIBLE_FORCE_COLOR="False", ANSIBLE_HOST_KEY_CHECKING="False", ANSIBLE_RETRY_FILES_ENABLED="False",
                            ANSIBLE_INVENTORY_UNPARSED_FAILED="True", ANSIBLE_PARAMIKO_RECORD_HOST_KEYS="False",
                            ANSIBLE_NOCOLOR="1")
        if image is None:
            self.envvars.update(ANSIBLE_COLLECTIONS_PATHS=self.collections, ANSIBLE_COLLECTIONS_PATH=self.collections)
        self.write("envvars", self.envvars)
        self.write("settings", {"job_timeout": 900, "pexpect_timeout": 5, "suppress_ansible_output": True})

    def write(self, name: str, document: Any) -> None:
        with open(os.path.join(self.env_dir, name), "w", encoding="utf-8") as handle:
            if isinstance(document, str):
                handle.write(document)
            else:
                json.dump(document, handle)

    def run(self, ident: str, playbook: str, extravars: Dict[str, Any], limit: Optional[str] = None,
            runner_options: Optional[List[str]] = None, timeout: float = 900) -> "JobResult":
        self.write("extravars", extravars)
        self.write("cmdline", "-u %s --become-method sudo" % MACHINE_USER)
        command = [tool("ansible-runner"), "run", self.dir, "-p", playbook, "--ident", ident]
        if limit:
            command += ["--limit", limit]
        command += list(runner_options or [])
        env = {name: value for name, value in os.environ.items() if not name.startswith(("ANSIBLE_", "K8S_AUTH_"))}
        env["PATH"] = VENV_BIN + os.pathsep + env.get("PATH", "")
        env["NUMA_DRIFT_REPORT_DIR"] = os.path.join(self.dir, "reports", ident)
        if self.image is not None:
            # In the container only env/envvars counts; the private data dir is /runner there.
            os.makedirs(env["NUMA_DRIFT_REPORT_DIR"], exist_ok=True)
            self.write("envvars", dict(self.envvars, NUMA_DRIFT_REPORT_DIR="/runner/reports/%s" % ident))
            env["CONTAINERS_CONF"] = self.image.containers_conf
            command += self.image.runner_options([self.fleet["directory"]])
        completed = subprocess.run(command, cwd=self.dir, env=env, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=timeout)
        return JobResult(os.path.join(self.dir, "artifacts", ident), completed)


class RealApi:
    """A real API server for the fleet (tests/integration/controlplane.py): the admin token registers the Nodes,
    ``credential_token`` is the AWX credential's bearer token (the shipped ServiceAccount's)."""

    def __init__(self, server: str, admin_token: str, ca_file: str, kubeconfig: str, credential_token: str) -> None:
        self.server, self.admin_token, self.ca_file = server, admin_token, ca_file
        self.kubeconfig, self.credential_token = kubeconfig, credential_token

    def up_args(self) -> List[str]:
        return ["--api-server", self.server, "--token", self.admin_token, "--api-ca", self.ca_file, "--kubeconfig", self.kubeconfig]


class SandboxJob:
    """A sandbox fleet (tests/sandbox/fleet.py, mixed scenario) and one private data dir for its jobs; with ``api``
    the fleet's Nodes are on that real API server and the credential is its ServiceAccount token."""

    def __init__(self, directory: str, image: Optional[Image] = None, api: Optional[RealApi] = None) -> None:
        fleet_dir = os.path.join(directory, "fleet")
        subprocess.run([sys.executable, FLEET, "up", "--dir", fleet_dir, "--scenario", "mixed", "--settle-seconds", "2"]
                       + (api.up_args() if api else []),
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)
        self.fleet_dir = fleet_dir
        try:
            with open(os.path.join(fleet_dir, "fleet.json"), encoding="utf-8") as handle:
                self.fleet = json.load(handle)
            self.fleet["directory"] = fleet_dir
            if api:
                self.fleet["token"] = api.credential_token  # what the credential injects (fleet.json keeps the admin's for down)
            with open(os.path.join(fleet_dir, "inventory.yml"), encoding="utf-8") as handle:
                self.fleet_inventory = yaml.safe_load(handle)
            self.nodes = {node["name"]: node for node in self.fleet["nodes"]}
            self.pdd = PrivateDataDir(os.path.join(directory, "pdd"), self.fleet, self.fleet_inventory,
                                      os.path.join(fleet_dir, "collections"), image=image)
        except BaseException:
            self.down()
            raise

    def down(self) -> None:
        subprocess.run([sys.executable, FLEET, "down", "--dir", self.fleet_dir], check=False, stdout=subprocess.PIPE, timeout=120)


class JobResult:
    """What AWX reads back: artifacts/<ident>/{rc,status,stdout,job_events/}."""

    def __init__(self, artifacts: str, completed: subprocess.CompletedProcess) -> None:
        self.artifacts = artifacts
        self.runner_output = completed.stdout
        self.runner_rc = completed.returncode

    def read(self, name: str) -> str:
        with open(os.path.join(self.artifacts, name), encoding="utf-8") as handle:
            return handle.read()

    @property
    def status(self) -> str:
        return self.read("status").strip()

    @property
    def rc(self) -> int:
        return int(self.read("rc").strip())

    @property
    def stdout(self) -> str:
        return self.read("stdout")

    def events(self) -> List[Dict[str, Any]]:
        directory = os.path.join(self.artifacts, "job_events")
        found = []
        for name in sorted(os.listdir(directory), key=lambda entry: int(entry.split("-", 1)[0])):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                found.append(json.load(handle))
        return found

    def host_results(self, task_action: str) -> Dict[str, Dict[str, Any]]:
        """``runner_on_ok`` results of one module, per host (the events AWX stores per host)."""
        return {event["event_data"]["host"]: event["event_data"]["res"] for event in self.events()
                if event.get("event") == "runner_on_ok" and event["event_data"].get("task_action") == task_action}
