# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the real kubelet of the QEMU guests and the read-only disk that carries it into them.

    python3 tests/vm/kubelet_disk.py          build what is not cached; print the disk's path (last line)
    python3 tests/vm/kubelet_disk.py --check  exit 0 when the disk is cached, 1 otherwise (builds nothing)

The guests run an unmodified kubelet at the oldest and the newest supported minor release
(``KUBELET_RELEASES``): the checkpoint layout of kubelet <= 1.36 (``era: legacy``) and the
``data``/``dataChecksum`` layout of 1.37 (``era: "1.37"``). Each is ``go build
k8s.io/kubernetes/cmd/kubelet`` at that release, in a Go module made exactly like the kubelet
judge's (tests/kubelet_judge/build.py: ``require k8s.io/kubernetes <release>`` plus one ``replace``
per staging module), version stamped (``kubelet --version`` says the release). Beside them
``fake-cri`` (tests/vm/fake_cri/): kubelet's own fake remote runtime on a unix socket, the container
runtime of the guests.

The disk is a raw ext4 image made with ``mkfs.ext4 -d`` (no loop mount, no root needed), label
``nd-kubelet``, holding ``kubelet-<release>`` for each release and ``fake-cri``. qemu.py
attaches it read-only (``define --drive``); the guests mount it at /opt/numa-drift-kubelet.

Cache: ``~/.cache/nodeops-numa-drift/kubelet/`` (``XDG_CACHE_HOME`` honoured): binaries per
release, the disk keyed by the releases, the fake runtime's source and this recipe. Concurrent
builders wait on a lock. With the Go build cache warm (the kubelet judge compiles most of
kubelet's packages) a release builds in seconds; cold, minutes.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Dict, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kubelet_judge"))

import build as judge_build  # noqa: E402  pylint: disable=wrong-import-position

KUBELET_RELEASES = ("v1.34.4", "v1.37.2")
FAKE_CRI_RELEASE = KUBELET_RELEASES[-1]
FAKE_CRI_SOURCE = os.path.join(HERE, "fake_cri", "main.go")
DISK_LABEL = "nd-kubelet"  # ext4 labels hold 16 bytes
CACHE_ROOT = os.path.join(os.path.dirname(judge_build.CACHE_ROOT), "kubelet")
# Bump when the way a binary (BUILD_RECIPE) or the disk (DISK_RECIPE) is made changes: old ones are rebuilt.
BUILD_RECIPE = "1: cmd/kubelet + fake_cri, -trimpath -ldflags=-s -w -X gitVersion"
DISK_RECIPE = "2: mkfs.ext4 -d, label nd-kubelet"
VERSION_FLAG = "-X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitTreeState=clean"


def log(message: str) -> None:
    print("kubelet-disk: %s" % message, file=sys.stderr, flush=True)


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part + b"\0")
    return digest.hexdigest()[:16]


def fake_cri_digest() -> str:
    with open(FAKE_CRI_SOURCE, "rb") as handle:
        return _digest(BUILD_RECIPE.encode(), FAKE_CRI_RELEASE.encode(), handle.read())


def kubelet_path(release: str) -> str:
    return os.path.join(CACHE_ROOT, release, "bin", "kubelet-%s" % _digest(BUILD_RECIPE.encode(), release.encode()))


def fake_cri_path() -> str:
    return os.path.join(CACHE_ROOT, FAKE_CRI_RELEASE, "bin", "fake-cri-%s" % fake_cri_digest())


def disk_path() -> str:
    key = _digest(BUILD_RECIPE.encode(), DISK_RECIPE.encode(), ",".join(KUBELET_RELEASES).encode(), fake_cri_digest().encode())
    return os.path.join(CACHE_ROOT, "disk-%s.img" % key)


def prepare_module(release: str) -> Dict[str, str]:
    """The release's Go module (go.mod like the judge's) with fake_cri's main; returns the go env."""
    os.makedirs(judge_build.CACHE_ROOT, exist_ok=True)
    env = judge_build.go_env(CACHE_ROOT)
    gomod = judge_build.kubernetes_gomod(judge_build.find_go((1, 0)), release, env)
    src = os.path.join(CACHE_ROOT, release, "src")
    os.makedirs(os.path.join(src, "fakecri"), exist_ok=True)
    with open(os.path.join(src, "go.mod"), "w", encoding="utf-8") as handle:
        handle.write(judge_build.consumer_gomod("nodeops.invalid/kubelet", release, gomod))
    shutil.copyfile(FAKE_CRI_SOURCE, os.path.join(src, "fakecri", "main.go"))
    env["NUMA_DRIFT_GO"] = judge_build.find_go(judge_build.go_line(gomod))
    env["NUMA_DRIFT_SRC"] = src
    return env


def go_build(env: Dict[str, str], package: str, target: str, ldflags: str) -> None:
    partial = "%s.%d.partial" % (target, os.getpid())
    os.makedirs(os.path.dirname(target), exist_ok=True)
    judge_build.run_go(env["NUMA_DRIFT_GO"], ["build", "-trimpath", "-ldflags=" + ldflags, "-o", partial, package],
                       cwd=env["NUMA_DRIFT_SRC"], env=env)
    os.replace(partial, target)


def build_kubelet(release: str) -> str:
    target = kubelet_path(release)
    if not os.access(target, os.X_OK):
        started = time.monotonic()
        go_build(prepare_module(release), "k8s.io/kubernetes/cmd/kubelet", target, "-s -w " + VERSION_FLAG % release)
        log("built kubelet %s in %.0f s" % (release, time.monotonic() - started))
    return target


def build_fake_cri() -> str:
    target = fake_cri_path()
    if not os.access(target, os.X_OK):
        started = time.monotonic()
        go_build(prepare_module(FAKE_CRI_RELEASE), "./fakecri", target, "-s -w")
        log("built fake-cri (k8s.io/cri-client %s) in %.0f s" % (FAKE_CRI_RELEASE, time.monotonic() - started))
    return target


def make_disk(files: Dict[str, str], target: str) -> None:
    """A raw ext4 image holding ``files`` (name in the image -> path here), read-only in the guest."""
    with tempfile.TemporaryDirectory(dir=CACHE_ROOT) as tree:
        size = 0
        for name, path in files.items():
            shutil.copyfile(path, os.path.join(tree, name))
            os.chmod(os.path.join(tree, name), 0o755)
            size += os.path.getsize(path)
        partial = "%s.%d.partial" % (target, os.getpid())
        with open(partial, "wb") as handle:
            handle.truncate(size + size // 10 + 16 * 1024 * 1024)
        subprocess.run(["mkfs.ext4", "-q", "-F", "-L", DISK_LABEL, "-m", "0", "-d", tree, partial], check=True)
        os.replace(partial, target)


def prune_disks(keep: str) -> None:
    for name in os.listdir(CACHE_ROOT):
        path = os.path.join(CACHE_ROOT, name)
        if name.startswith("disk-") and path != keep:
            os.unlink(path)


def build_disk() -> str:
    target = disk_path()
    with judge_build.go_build_turn(lambda: os.path.exists(target)) as mine:
        if mine:
            files = {"kubelet-%s" % release: build_kubelet(release) for release in KUBELET_RELEASES}
            files["fake-cri"] = build_fake_cri()
            make_disk(files, target)
            prune_disks(keep=target)
            log("disk %s: %s" % (target, ", ".join(sorted(files))))
    return target


def built_kubelets(releases: Sequence[str] = KUBELET_RELEASES) -> Dict[str, str]:
    """``{release: binary}`` of the guests' kubelet (the disk and its binaries built when missing): the kubelet
    judge's node trees hold them where their unit runs kubelet."""
    build_disk()
    return {release: kubelet_path(release) for release in releases}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 0 when the disk is cached, 1 otherwise")
    args = parser.parse_args(argv)
    if args.check:
        return 0 if os.path.exists(disk_path()) else 1
    try:
        print(build_disk())
    except (judge_build.JudgeBuildError, OSError, subprocess.CalledProcessError) as error:
        log("cannot build the guests' kubelet: %s" % error)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
