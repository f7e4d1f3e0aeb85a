# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers for tests that drive the sandbox: processes, the API, Ansible with this collection.

Everything here starts real processes (the sandbox CLIs, ``ansible``, ``ansible-playbook``)
and keeps track of them so a test can always stop what it started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

SANDBOX_DIR = os.path.dirname(os.path.realpath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(SANDBOX_DIR))
VENV_BIN = os.path.join(CHECKOUT, ".venv", "bin")
PYTHON = os.path.join(VENV_BIN, "python") if os.path.exists(os.path.join(VENV_BIN, "python")) else sys.executable


def script(name: str) -> str:
    return os.path.join(SANDBOX_DIR, name)


def run_script(name: str, *args: str, timeout: float = 60, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, script(name)] + list(args), capture_output=True, text=True, timeout=timeout, env=env, check=False)


def wait_for(predicate: Callable[[], Any], timeout: float, step: float = 0.1, what: str = "condition") -> Any:
    """The predicate's first truthy value; AssertionError after ``timeout`` seconds."""
    end = time.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.time() > end:
            raise AssertionError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(step)


def poll_until(fetch: Callable[[], Any], accept: Callable[[Any], bool], timeout: float, what: str = "condition") -> Any:
    """The first value of ``fetch()`` that ``accept`` takes; AssertionError after ``timeout`` seconds."""
    found: List[Any] = []

    def accepted() -> bool:
        value = fetch()
        if accept(value):
            found.append(value)
            return True
        return False

    wait_for(accepted, timeout, what=what)
    return found[0]


# --------------------------------------------------------------------------- API server


@dataclass
class ApiServer:
    process: subprocess.Popen
    url: str
    state_file: str
    log_file: str

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def start_apiserver(directory: str, state: Optional[Dict[str, Any]] = None, *extra: str) -> ApiServer:
    os.makedirs(directory, exist_ok=True)
    state_file = os.path.join(directory, "state.json")
    port_file = os.path.join(directory, "port")
    log_file = os.path.join(directory, "apiserver.log")
    if state is not None:
        with open(state_file, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
    command = [PYTHON, script("apiserver.py"), "--state", state_file, "--port-file", port_file,
               "--exit-if-missing", directory, "--max-lifetime", "900"] + list(extra)
    with open(log_file, "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)  # pylint: disable=consider-using-with
    wait_for(lambda: os.path.exists(port_file) or process.poll() is not None, 10, what="the API server's port file")
    if process.poll() is not None:
        with open(log_file, encoding="utf-8") as handle:
            raise AssertionError("the API server exited: " + handle.read())
    with open(port_file, encoding="utf-8") as handle:
        port = int(handle.read())
    return ApiServer(process, "http://127.0.0.1:%d" % port, state_file, log_file)


def http(url: str, method: str = "GET", body: Any = None, content_type: str = "application/json",
         token: Optional[str] = "sandbox-token") -> Tuple[int, Any]:
    """(status, decoded JSON or text); HTTP errors are returned, connection errors raise."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            code, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        code, raw = error.code, error.read()
    text = raw.decode("utf-8")
    try:
        return code, json.loads(text)
    except ValueError:
        return code, text


def kubeconfig_text(url: str, token: str = "sandbox-token") -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "sandbox",
        "clusters": [{"name": "sandbox", "cluster": {"server": url}}],
        "users": [{"name": "sandbox", "user": {"token": token}}],
        "contexts": [{"name": "sandbox", "context": {"cluster": "sandbox", "user": "sandbox"}}],
    })


def ready_condition(node: Dict[str, Any]) -> Dict[str, Any]:
    return next((c for c in node.get("status", {}).get("conditions", []) if c.get("type") == "Ready"), {})


# --------------------------------------------------------------------------- Ansible


def collections_tree(directory: str) -> str:
    """``<directory>/ansible_collections/nodeops/numa_drift -> checkout`` (never inside the repository)."""
    link = os.path.join(directory, "ansible_collections", "nodeops", "numa_drift")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if not os.path.islink(link):
        os.symlink(CHECKOUT, link)
    return directory


def ansible_env(collections_path: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": collections_path,
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_DEPRECATION_WARNINGS": "0",
        "ANSIBLE_LOCALHOST_WARNING": "0",
        "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        "ANSIBLE_HOST_KEY_CHECKING": "0",
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
        "ANSIBLE_FORKS": "8",
        "PATH": VENV_BIN + os.pathsep + env.get("PATH", ""),
    })
    return env


def ansible_tool(tool: str, args: Sequence[str], collections_path: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([os.path.join(VENV_BIN, tool)] + list(args), capture_output=True, text=True,
                          env=ansible_env(collections_path), timeout=timeout, check=False)


def ansible_json_results(stdout: str) -> Dict[str, Dict[str, Any]]:
    """Per-host results from ``ansible`` run with ``ANSIBLE_STDOUT_CALLBACK=json`` output."""
    document = json.loads(stdout)
    results: Dict[str, Dict[str, Any]] = {}
    for play in document["plays"]:
        for task in play["tasks"]:
            results.update(task["hosts"])
    return results


def ansible_module(hosts: str, inventory: str, module: str, args: str, collections_path: str, *extra: str) -> Dict[str, Dict[str, Any]]:
    """Run one module ad hoc; ``inventory`` ``localhost,`` runs it locally with this interpreter."""
    env_args = ["-i", inventory, hosts, "-m", module, "-a", args] + list(extra)
    if inventory == "localhost,":
        env_args += ["-c", "local", "-e", "ansible_python_interpreter=" + PYTHON]
    completed = subprocess.run([os.path.join(VENV_BIN, "ansible")] + env_args, capture_output=True, text=True,
                               env=dict(ansible_env(collections_path), ANSIBLE_STDOUT_CALLBACK="json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1"),
                               timeout=300, check=False)
    if not completed.stdout.strip().startswith("{"):
        raise AssertionError("ansible produced no JSON: %s\n%s" % (completed.stdout, completed.stderr))
    return ansible_json_results(completed.stdout)


# --------------------------------------------------------------------------- processes


def processes_naming(path: str) -> List[str]:
    """``ps`` lines of processes whose command line contains ``path``."""
    listing = subprocess.run(["ps", "-eww", "-o", "pid,stat,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in listing.splitlines()[1:] if path in line]
