# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The AWX execution environment: ansible-builder accepts the definitions and sees our dependencies.

No image is built (that needs a container engine and a registry): ``ansible-builder create`` writes
the build context from execution-environment/execution-environment.yml, and ``ansible-builder
introspect`` reads the collection's meta/execution-environment.yml the way a build does.
"""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILDER = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
EE_DIR = os.path.join(CHECKOUT, "execution-environment")


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
        collections = {entry["name"] for entry in yaml.safe_load(handle)["collections"]}
    assert collections == {"kubernetes.core", "nodeops.numa_drift"}


def test_builder_introspection_finds_the_collections_python_dependencies(tmp_path) -> None:
    link = tmp_path / "ansible_collections" / "nodeops" / "numa_drift"
    link.parent.mkdir(parents=True)
    link.symlink_to(CHECKOUT)
    output = builder("introspect", "--sanitize", str(tmp_path), cwd=str(tmp_path))
    data = yaml.safe_load(output.split("---", 1)[1])
    assert requirement_names(data["python"]) == {"kubernetes", "jmespath"}, data
    assert all("from collection nodeops.numa_drift" in line for line in data["python"])
