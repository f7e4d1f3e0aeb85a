# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tarball holds the product only: ``ansible-galaxy collection build`` after a demo run.

A temporary copy of the checkout (its tracked and not-ignored files) gets what a run of
``scripts/demo.sh`` and a developer's tools leave beside it: ``numa-drift-demo/`` with fake nodes,
logs, backups, the sandbox kubeconfig and symlinks, ``tests/output/``, ``scratch/``. The built
tarball must hold none of it, no development-only test tooling, build helper, molecule scenario or
changelog fragment, and no symlink, and still ship what ansible-test needs from ``tests/``. Its README is
docs/collection-readme.md (the repository's README.md is about the checkout).
tests/integration/test_installed_collection.py installs the tarball and runs what it ships.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile

import pytest

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GALAXY = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")


def _checkout_files():
    if not os.path.isdir(os.path.join(CHECKOUT, ".git")) and not os.path.isfile(os.path.join(CHECKOUT, ".git")):
        pytest.fail("%s is not a git checkout: this test copies the checkout's files" % CHECKOUT)
    listed = subprocess.run(["git", "-C", CHECKOUT, "ls-files", "-co", "--exclude-standard", "-z"],
                            check=True, capture_output=True).stdout.decode()
    return [name for name in listed.split("\0") if name and os.path.lexists(os.path.join(CHECKOUT, name))]


def _write(path, text="x\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _leave_demo_debris(copy):
    """What a demo run and the usual tools leave in a checkout (scripts/demo.sh, pytest, ansible-test)."""
    demo = os.path.join(copy, "numa-drift-demo")
    _write(os.path.join(demo, "fleet", "kubeconfig"),
           "apiVersion: v1\nkind: Config\nusers:\n- name: demo\n  user:\n    token: sandbox-bearer-token\n")
    _write(os.path.join(demo, "fleet", "fleet.json"), "{}\n")
    _write(os.path.join(demo, "fleet", "nodes", "node-01", "var", "lib", "kubelet", "memory_manager_state"), "{}\n")
    _write(os.path.join(demo, "fleet", "nodes", "node-01", "var", "lib", "kubelet", "memory_manager_state.numa-drift.bak"),
           "{}\n")
    _write(os.path.join(demo, "report-remediate", "report.html"), "<html></html>\n")
    _write(os.path.join(demo, "probe-after.json"), "{}\n")
    _write(os.path.join(demo, "logs", "kubelet-node-01.log"), "started\n")
    os.symlink(".", os.path.join(demo, "fleet", "loop"))  # a self-referencing link, as the sandbox leaves one
    os.symlink(os.path.join(demo, "fleet", "kubeconfig"), os.path.join(copy, "kubeconfig"))
    _write(os.path.join(copy, "tests", "output", "junit", "result.xml"), "<testsuite/>\n")
    _write(os.path.join(copy, "scratch", "notes.txt"))
    _write(os.path.join(copy, ".pytest_cache", "v", "cache", "lastfailed"), "{}\n")


@pytest.fixture(scope="module")
def tarball(tmp_path_factory):
    base = tmp_path_factory.mktemp("build")
    copy = os.path.join(str(base), "checkout")
    for name in _checkout_files():
        source, target = os.path.join(CHECKOUT, name), os.path.join(copy, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)
    _leave_demo_debris(copy)
    output = os.path.join(str(base), "dist")
    built = subprocess.run([GALAXY, "collection", "build", "--output-path", output, copy],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (name,) = os.listdir(output)
    return os.path.join(output, name)


@pytest.fixture(scope="module")
def members(tarball):
    with tarfile.open(tarball) as archive:
        return {member.name: member for member in archive.getmembers()}


def test_no_demo_file_and_no_kubeconfig(members):
    leaked = sorted(name for name in members
                    if name.startswith(("numa-drift-demo", "scratch", "tests/output", ".pytest_cache"))
                    or "kubeconfig" in os.path.basename(name))
    assert leaked == []


def test_no_symlink(members):
    assert sorted(name for name, member in members.items() if member.issym() or member.islnk()) == []


def test_no_development_only_test_tooling(members):
    tooling = ("tests/integration", "tests/sandbox", "tests/vm", "tests/kubelet_judge", "tests/apt-requirements.sh")
    assert sorted(name for name in members if name.startswith(tooling)) == []


def test_nothing_that_needs_the_checkout(members):
    needs_checkout = ("README.md", "execution-environment/", "extensions/molecule/", "changelogs/fragments/", "changelogs/config.yaml",
                      "scripts/", "tests/unit/test_collection_build.py", "tests/unit/test_go_", "tests/unit/test_vm_",
                      "tests/unit/test_test_stages.py", "tests/unit/test_node_parity.py", "tests/unit/test_words.py",
                      "tests/unit/test_quiet_commands.py", "tests/unit/test_docs_tables.py",
                      "tests/unit/test_one_set_of_numbers.py", "docs/dev/")
    assert sorted(name for name in members if name.startswith(needs_checkout) or name.endswith(".whl")) == []


def test_the_readme_is_the_installed_collections(members, tarball):
    with tarfile.open(tarball) as archive:
        manifest = json.load(archive.extractfile("MANIFEST.json"))
        readme = archive.extractfile(manifest["collection_info"]["readme"]).read().decode("utf-8")
    assert manifest["collection_info"]["readme"] == "docs/collection-readme.md"
    assert "scripts/" not in readme and "ansible-playbook" in readme


def test_ships_the_product_and_what_ansible_test_needs(members):
    for name in ("MANIFEST.json", "FILES.json", "docs/collection-readme.md", "changelogs/changelog.yaml", "meta/runtime.yml",
                 "plugins/modules/numa_drift_facts.py",
                 "plugins/modules/kubelet_mm_checkpoint.py", "roles/remediate/tasks/main.yml",
                 "playbooks/remediate.yml", "docs/safety.md", "tests/config.yml", "extensions/rbac/nodeops-numa-drift.yml",
                 "tests/fixtures/kubelet-checkpoints.json", "tests/unit/plugins/module_utils/_policy/test_drift.py"):
        assert name in members, name
