# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tarball runs once installed: built from the checkout, installed into a clean project, used from there.

``ansible-galaxy collection build`` of the checkout's files, ``ansible-galaxy collection install <tarball> -p
<project>/collections``, then, with only that project on the collections path and the checkout nowhere on
any path: the contents hold nothing that needs the checkout (every ``ansible_collections.nodeops.numa_drift``
import resolves to a shipped file, the README's links to shipped files), ``ansible-doc`` shows every module,
the inventory plugin and the roles, and every shipped playbook passes ``--syntax-check``. The shipped unit
tests run from an installed tarball in the unit stage (``scripts/test.sh unit``), with the command the README gives.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from typing import Dict, List

import pytest

from ansible_collections.nodeops.numa_drift.tests.integration import awx_job

BIN = os.path.dirname(sys.executable)
PREFIX = "ansible_collections.nodeops.numa_drift"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Dict[str, str]:
    base = tmp_path_factory.mktemp("installed")
    source = os.path.join(str(base), "checkout-copy")
    awx_job.copy_project(source)
    tarball = awx_job.build_collection(source, os.path.join(str(base), "dist"))
    root = os.path.join(str(base), "project")
    collections = os.path.join(root, "collections")
    os.makedirs(root)
    # As docs/install.md says (--offline: no Galaxy here; kubernetes.core is the installed `ansible` package's).
    completed = subprocess.run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "--offline", tarball, "-p", collections],
                               cwd=root, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    assert completed.returncode == 0, completed.stdout
    return {"root": root, "collections": collections, "tarball": tarball,
            "installed": os.path.join(collections, "ansible_collections", "nodeops", "numa_drift")}


def clean_env(project: Dict[str, str], **extra: str) -> Dict[str, str]:
    """No ANSIBLE_*/PYTHONPATH of the caller: only the project's collections (and the Python's own, kubernetes.core)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("ANSIBLE_", "PYTHON"))}
    env.update(ANSIBLE_COLLECTIONS_PATH=project["collections"], ANSIBLE_HOME=os.path.join(project["root"], ".ansible"),
               PATH=BIN + os.pathsep + os.environ.get("PATH", ""), **extra)
    return env


def run(project: Dict[str, str], command: List[str], timeout: float = 300, cwd: str = "", **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd or project["root"], env=clean_env(project, **extra), check=False, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=timeout)


def shipped(project: Dict[str, str]) -> List[str]:
    found = []
    for directory, _dirs, files in os.walk(project["installed"]):
        found += [os.path.relpath(os.path.join(directory, name), project["installed"]) for name in files]
    return sorted(found)


def test_the_contents_hold_nothing_that_needs_the_checkout(project) -> None:
    files = shipped(project)
    allowed = ("MANIFEST.json", "FILES.json", "LICENSE", "awx/", "changelogs/changelog.yaml", "docs/", "examples/", "extensions/rbac/",
               "extensions/prometheus/", "meta/", "playbooks/", "plugins/", "roles/", "tests/config.yml", "tests/fixtures/",
               "tests/support/", "tests/unit/")
    assert [name for name in files if not name.startswith(allowed)] == []
    # Every import of this collection's code resolves to a shipped file: every one in the plugins, the module-level
    # ones in tests/ (a helper of tests/support may import the checkout's tooling inside a function for the
    # checkout's own tests; the shipped tests that run below show that none of them calls it).
    missing = []
    for name in files:
        if not name.endswith(".py"):
            continue
        with open(os.path.join(project["installed"], name), encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), name)
        for node in (tree.body if name.startswith("tests/") else ast.walk(tree)):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for module in modules:
                if module.startswith(PREFIX + "."):
                    path = os.path.join(project["installed"], *module[len(PREFIX) + 1:].split("."))
                    if not (os.path.isfile(path + ".py") or os.path.isdir(path)):
                        missing.append("%s imports %s" % (name, module))
    assert missing == []


def test_the_readme_describes_the_installed_collection(project) -> None:
    with open(os.path.join(project["installed"], "MANIFEST.json"), encoding="utf-8") as handle:
        readme = json.load(handle)["collection_info"]["readme"]
    with open(os.path.join(project["installed"], readme), encoding="utf-8") as handle:
        text = handle.read()
    assert "scripts/" not in text and "numa-drift-demo" not in text
    # Its links lead to shipped files.
    base = os.path.dirname(os.path.join(project["installed"], readme))
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)]+)\)", text) if "://" not in link and not link.startswith("#")]
    assert links and [link for link in links if not os.path.exists(os.path.join(base, link))] == []


def test_ansible_doc_shows_every_plugin_and_role(project) -> None:
    modules = sorted(name[:-3] for name in os.listdir(os.path.join(project["installed"], "plugins", "modules")) if name.endswith(".py"))
    assert {"numa_drift_facts", "kubelet_mm_checkpoint", "numa_drift_metrics"} <= set(modules)
    for kind, names in (("module", modules), ("inventory", ["k8s_nodes"]), ("role", ["remediate", "guard"])):
        completed = run(project, [os.path.join(BIN, "ansible-doc"), "-t", kind, "--json"] + ["nodeops.numa_drift." + name for name in names])
        assert completed.returncode == 0, completed.stderr
        docs = json.loads(completed.stdout)
        assert sorted(docs) == sorted("nodeops.numa_drift." + name for name in names), completed.stderr
        if kind != "role":
            for name, doc in docs.items():
                # From the installed tree, not from a checkout.
                assert doc["doc"]["filename"].startswith(project["installed"] + os.sep), (name, doc["doc"]["filename"])


def test_every_shipped_playbook_passes_syntax_check(project) -> None:
    names = sorted(name[:-4] for name in os.listdir(os.path.join(project["installed"], "playbooks")) if name.endswith(".yml"))
    assert {"probe", "remediate", "rollback", "guard"} <= set(names)
    playbooks = ["nodeops.numa_drift." + name for name in names]
    # The job template playbooks; awx/configure.yml needs awx.awx, not installed here: test_awx_configure.py runs it.
    playbooks += sorted(os.path.join(project["installed"], "awx", name) for name in os.listdir(os.path.join(project["installed"], "awx"))
                        if name.endswith(".yml") and name != "configure.yml")
    assert os.path.isfile(os.path.join(project["installed"], "awx", "configure.yml"))
    assert sorted(os.listdir(os.path.join(project["installed"], "awx", "surveys"))) == ["guard.json", "remediate.json", "rollback.json"]
    completed = run(project, [os.path.join(BIN, "ansible-playbook"), "--syntax-check", "-i", "localhost,"] + playbooks)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "ERROR" not in completed.stderr, completed.stderr
