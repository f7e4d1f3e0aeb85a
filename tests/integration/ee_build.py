# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the execution environment of execution-environment.yml on this machine, with no registry.

    python tests/integration/ee_build.py            build (or reuse) the image; print a JSON summary
    python tests/integration/ee_build.py --check    exit 3 and say why when it cannot build here
    python tests/integration/ee_build.py --key      print the cache keys, build nothing

What it does (docs/awx.md, "Building the execution environment locally"):

1. **Base image.** ``debootstrap --variant=minbase bookworm`` with Python 3, pip and the SSH client,
   then ``podman import`` as ``localhost/nodeops-numa-drift-ee-base:<key>``. The machine's CA
   bundle replaces the root's ``/etc/ssl/certs/ca-certificates.crt`` (a TLS-intercepting proxy's
   CA is trusted by pip in the build as on the host), as your organisation's base image would.
   The root is kept as ``base-<key>.tar`` in the cache: a lost image is re-imported in seconds.
2. **Execution environment.** docs/awx.md's documented command, as written, in a copy of the
   checkout's files (what a fresh clone holds): ``EE_BASE_IMAGE=<the base above> bash
   execution-environment/build.sh -t localhost/numa-drift-ee:<key>`` with the options docs/awx.md gives
   for a Debian base (``--build-arg PKGMGR=/usr/bin/apt-get --build-arg PKGMGR_PRESERVE_CACHE=always``)
   and for this machine's podman (``--extra-build-cli-args "--network=host --pull=never"``). build.sh
   builds the collection tarball, copies the installed ``kubernetes.core`` and runs ``ansible-builder
   build``; nothing in the definition is changed. Python packages come from PyPI through the host network.

The keys are sha256 digests: the base key of the recipe below and the CA bundle; the EE key of the
base image, execution-environment/'s files, the collections' FILES.json, ansible-builder's version and
the options above. An image whose key exists is reused (nothing is built); after a build, older keys are
removed from podman and the cache.

Cache: ``$NUMA_DRIFT_EE_CACHE`` or ``~/.cache/nodeops-numa-drift/ee``. Needs root, podman,
debootstrap (tests/integration/requirements.sh installs them) and ansible-builder (requirements.txt).
Concurrent callers wait on a lock and reuse the result. podman runs with ``CONTAINERS_CONF`` set to
``<cache>/containers.conf`` (explicit ``default_ulimits`` no higher than this process's own hard limits, nproc no higher
than ``kernel.pid_max``: asking for more, as podman's defaults do on some hosts, makes runc fail with
"error setting rlimits ... operation not permitted"); the summary names it so that
ansible-runner's process isolation uses the same; it also names runc, cgroupfs and file events, which
work without systemd as init.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Any, Dict, List, Optional


CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(CHECKOUT, "execution-environment")
BIN = os.path.dirname(os.path.abspath(sys.executable))
SUITE = "bookworm"
# The base root: what ansible-builder's scripts need (python3 with pip: Debian's pip, because Debian
# disables ensurepip for the system Python, hence options.skip_pip_install) and what an EE running this
# collection uses (ssh for the nodes, CA certificates).
BASE_PACKAGES = ["python3", "python3-pip", "ca-certificates", "openssh-client"]
# Bump when the recipe changes in a way the lists above do not show.
BASE_RECIPE_VERSION = "1"
BASE_REPOSITORY = "localhost/nodeops-numa-drift-ee-base"
EE_REPOSITORY = "localhost/numa-drift-ee"
# What execution-environment/build.sh hashes into the image besides the collections.
DEFINITION_FILES = ("build.sh", "execution-environment.yml", "requirements.txt", "requirements.yml")
# docs/awx.md's additions for a Debian base image (apt-get, not dnf; ansible-builder's "$PKGMGR clean all" is a
# dnf command) and for this machine's podman (the base image is local; pip reaches PyPI through the host's network).
DEBIAN_BUILD_OPTIONS = ["--container-runtime", "podman", "-v", "2",
                        "--build-arg", "PKGMGR=/usr/bin/apt-get", "--build-arg", "PKGMGR_PRESERVE_CACHE=always",
                        "--extra-build-cli-args", "--network=host --pull=never"]
SKIP_EXIT = 3


class CannotBuild(Exception):
    """This machine cannot build the image (not root, no podman, ...): a reason, not a failure."""


def say(message: str) -> None:
    sys.stderr.write("ee-build: %s\n" % message)
    sys.stderr.flush()


def cache_root() -> str:
    return os.environ.get("NUMA_DRIFT_EE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "nodeops-numa-drift", "ee")


def ca_bundle() -> str:
    for candidate in (os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and os.path.isfile(candidate):
            return candidate
    raise CannotBuild("no CA bundle found (SSL_CERT_FILE, /etc/ssl/certs/ca-certificates.crt)")


def sha256_of(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()[:16]


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def mirror() -> str:
    return os.environ.get("NUMA_DRIFT_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def base_key() -> str:
    recipe = json.dumps({"suite": SUITE, "packages": BASE_PACKAGES, "version": BASE_RECIPE_VERSION}, sort_keys=True)
    return sha256_of(recipe.encode("utf-8"), read_bytes(ca_bundle()))


def tool(name: str) -> str:
    found = os.path.join(BIN, name)
    return found if os.access(found, os.X_OK) else (shutil.which(name) or name)


def check_machine() -> None:
    if os.geteuid() != 0:
        raise CannotBuild("building the base image needs root (debootstrap, podman import); running as uid %d" % os.geteuid())
    for command in ("podman", "runc", "debootstrap"):
        if not shutil.which(command):
            raise CannotBuild("%s is not installed (bash tests/integration/requirements.sh installs it)" % command)
    if not os.access(tool("ansible-builder"), os.X_OK):
        raise CannotBuild("ansible-builder is not installed (requirements.txt)")
    completed = subprocess.run(["podman", "info", "--format", "{{.Host.OCIRuntime.Name}}"], check=False, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=podman_env(), timeout=120)
    if completed.returncode != 0:
        raise CannotBuild("podman cannot run here: %s" % completed.stdout.strip()[-500:])


def read_int(path: str, default: int) -> int:
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return default


def containers_conf() -> str:
    """A containers.conf with ulimits this process may grant (podman's defaults can exceed them)."""
    lines = ["# Written by tests/integration/ee_build.py", "[containers]"]
    limits = []
    for name, which, cap in (("nofile", resource.RLIMIT_NOFILE, read_int("/proc/sys/fs/nr_open", 1048576)),
                             ("nproc", resource.RLIMIT_NPROC, read_int("/proc/sys/kernel/pid_max", 32768))):
        soft, hard = resource.getrlimit(which)
        hard = cap if hard == resource.RLIM_INFINITY else min(hard, cap)
        soft = hard if soft == resource.RLIM_INFINITY else min(soft, hard)
        limits.append('"%s=%d:%d"' % (name, soft, hard))
    lines.append("default_ulimits = [%s]" % ", ".join(limits))
    # What works with and without systemd as init (CI machines, containers): runc (Debian's podman
    # may pull crun instead), cgroupfs, and events in a file rather than the journal.
    lines += ["[engine]", 'runtime = "runc"', 'cgroup_manager = "cgroupfs"', 'events_logger = "file"']
    path = os.path.join(cache_root(), "containers.conf")
    text = "\n".join(lines) + "\n"
    os.makedirs(cache_root(), exist_ok=True)
    if not os.path.exists(path) or read_bytes(path) != text.encode("utf-8"):
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(path + ".tmp", path)
    return path


def podman_env() -> Dict[str, str]:
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", containers_conf())
    return env


def podman(*args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    completed = subprocess.run(["podman", *args], check=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=podman_env(), timeout=timeout)
    if check and completed.returncode != 0:
        raise RuntimeError("podman %s failed (rc %d): %s" % (" ".join(args), completed.returncode, completed.stderr[-2000:]))
    return completed


def image_exists(tag: str) -> bool:
    return podman("image", "exists", tag, check=False).returncode == 0


def run_logged(command: List[str], log: str, timeout: float, env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> None:
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("\n$ %s\n" % " ".join(command))
        handle.flush()
        completed = subprocess.run(command, check=False, stdout=handle, stderr=subprocess.STDOUT, timeout=timeout, env=env, cwd=cwd)
    if completed.returncode != 0:
        with open(log, encoding="utf-8", errors="replace") as handle:
            tail = handle.read()[-3000:]
        raise RuntimeError("%s failed (rc %d), log %s:\n%s" % (command[0], completed.returncode, log, tail))


def make_base_tar(tar_path: str, log: str) -> None:
    """debootstrap a minimal bookworm root with the host's CA bundle; pack it as a tar for podman import."""
    work = tempfile.mkdtemp(prefix="root-", dir=os.path.dirname(tar_path))
    root = os.path.join(work, "root")
    try:
        run_logged(["debootstrap", "--variant=minbase", "--include=" + ",".join(BASE_PACKAGES), SUITE, root, mirror()], log, timeout=1800)
        # The machine's trust: what pip in the build needs to reach PyPI through this network.
        shutil.copyfile(ca_bundle(), os.path.join(root, "etc", "ssl", "certs", "ca-certificates.crt"))
        # Slim: package caches and docs are of no use in an image.
        for pattern in ("var/cache/apt/archives/*.deb", "var/lib/apt/lists/*", "usr/share/doc/*", "usr/share/man/*", "usr/share/info/*"):
            for path in glob.glob(os.path.join(root, pattern)):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
        partial = tar_path + ".partial"
        run_logged(["tar", "--numeric-owner", "--xattrs", "-C", root, "-cf", partial, "."], log, timeout=600)
        os.replace(partial, tar_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure_base(key: str, log: str, timings: Dict[str, float]) -> str:
    tag = "%s:%s" % (BASE_REPOSITORY, key)
    if image_exists(tag):
        return tag
    tar_path = os.path.join(cache_root(), "base-%s.tar" % key)
    if not os.path.isfile(tar_path):
        say("debootstrap %s (%s) into the base root" % (SUITE, ", ".join(BASE_PACKAGES)))
        started = time.monotonic()
        make_base_tar(tar_path, log)
        timings["debootstrap"] = round(time.monotonic() - started, 1)
    say("podman import %s as %s" % (tar_path, tag))
    started = time.monotonic()
    podman("import", "--change", "ENV LANG=C.UTF-8", "--change", "CMD [\"/bin/bash\"]", tar_path, tag)
    timings["import"] = round(time.monotonic() - started, 1)
    return tag


def installed_collection(name: str) -> str:
    """Directory of an installed collection (the one ansible-galaxy of this Python finds first)."""
    completed = subprocess.run([tool("ansible-galaxy"), "collection", "list", name, "--format", "json"], check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    found = json.loads(completed.stdout or "{}") if completed.returncode == 0 else {}
    for base, collections in found.items():
        if name in collections:
            namespace, collection = name.split(".")
            return os.path.join(base, namespace, collection)
    raise CannotBuild("collection %s is not installed (the ansible package of requirements.txt ships it)" % name)


def checkout_files() -> Optional[List[str]]:
    """Tracked and untracked-but-not-ignored files of the checkout; None outside a git work tree."""
    completed = subprocess.run(["git", "-C", CHECKOUT, "ls-files", "-co", "--exclude-standard", "-z"], check=False,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if completed.returncode != 0:
        return None
    names = completed.stdout.decode("utf-8").split("\0")
    return [name for name in names if name and os.path.isfile(os.path.join(CHECKOUT, name))]


def clone(target: str) -> str:
    """A copy of the checkout's files (not of stray local ones such as a venv), as a fresh clone would hold."""
    names = checkout_files()
    if names is None:
        shutil.copytree(CHECKOUT, target, symlinks=True, ignore=shutil.ignore_patterns(".git", ".venv*", "tests/output", "__pycache__"))
        return target
    for name in names:
        destination = os.path.join(target, name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(os.path.join(CHECKOUT, name), destination)
    return target


def build_collection(source: str, output: str, log: str) -> str:
    """``ansible-galaxy collection build`` of ``source``; the tarball's path."""
    run_logged([tool("ansible-galaxy"), "collection", "build", "--force", "--output-path", output, source], log, timeout=600)
    return sorted(glob.glob(os.path.join(output, "nodeops-numa_drift-*.tar.gz")))[-1]


def tarball_files_json(tarball: str) -> bytes:
    """FILES.json of a collection tarball: every file's sha256, no timestamps (a content digest)."""
    with tarfile.open(tarball) as archive:
        member = archive.extractfile("FILES.json")
        assert member is not None
        return member.read()


def ee_key(source: str, base_tag: str, work: str, log: str) -> Dict[str, Any]:
    """The digest of what the image is built from: the base, execution-environment/ as it is, both collections, ansible-builder."""
    tarball = build_collection(source, os.path.join(work, "key"), log)
    kubernetes_core = installed_collection("kubernetes.core")
    builder_version = subprocess.run([tool("ansible-builder"), "--version"], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    definition = [read_bytes(os.path.join(source, "execution-environment", name)) for name in DEFINITION_FILES]
    key = sha256_of(base_tag.encode("utf-8"), *definition, tarball_files_json(tarball),
                    read_bytes(os.path.join(kubernetes_core, "MANIFEST.json")), read_bytes(os.path.join(kubernetes_core, "FILES.json")),
                    builder_version.encode("utf-8"), json.dumps(DEBIAN_BUILD_OPTIONS).encode("utf-8"))
    return {"key": key, "ansible_builder": builder_version}


def documented_build(source: str, base_tag: str, tag: str, log: str) -> None:
    """docs/awx.md's command, as written, in the clone: ``EE_BASE_IMAGE=<base> bash execution-environment/build.sh -t <tag> ...``.

    The options added are the ones docs/awx.md gives for a Debian base image and this machine's podman."""
    command = ["bash", os.path.join(source, "execution-environment", "build.sh"), "-t", tag] + DEBIAN_BUILD_OPTIONS
    env = dict(podman_env(), EE_BASE_IMAGE=base_tag, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    run_logged(command, log, timeout=3600, env=env, cwd=source)


def prune(repository: str, keep: str, pattern: str) -> None:
    """Remove the images and cache files of keys other than ``keep``."""
    listed = podman("images", "--format", "{{.Repository}}:{{.Tag}}", repository, check=False).stdout.split()
    for tag in listed:
        if tag.startswith(repository + ":") and tag != "%s:%s" % (repository, keep):
            podman("rmi", "--force", tag, check=False)
    for path in glob.glob(os.path.join(cache_root(), pattern)):
        if keep not in os.path.basename(path):
            os.unlink(path)


def dangling_images() -> set:
    listed = podman("images", "--all", "--quiet", "--no-trunc", "--filter", "dangling=true", check=False).stdout.split()
    return set(listed)


def inspect(tag: str) -> Dict[str, Any]:
    """What the image holds: ansible-core and the collections (read by running it)."""
    script = ("import json, subprocess, ansible, ansible_runner; from importlib.metadata import version; "
              "listed = json.loads(subprocess.run(['ansible-galaxy', 'collection', 'list', '--format', 'json'], check=True, "
              "capture_output=True, text=True).stdout); "
              "print(json.dumps({'ansible_core': ansible.__version__, 'ansible_runner': version('ansible-runner'), "
              "'python': __import__('sys').version.split()[0], "
              "'collections': {name: info['version'] for paths in listed.values() for name, info in paths.items()}}))")
    completed = podman("run", "--rm", "--network=none", tag, "python3", "-c", script, timeout=300)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def build(rebuild: bool = False) -> Dict[str, Any]:
    check_machine()
    root = cache_root()
    os.makedirs(root, exist_ok=True)
    timings: Dict[str, float] = {}
    started = time.monotonic()
    with open(os.path.join(root, ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        log = os.path.join(root, "build.log")
        with open(log, "w", encoding="utf-8") as handle:
            handle.write("ee_build.py at %s\n" % time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        key_b = base_key()
        base_tag = ensure_base(key_b, log, timings)
        work = tempfile.mkdtemp(prefix="context-", dir=root)
        try:
            source = clone(os.path.join(work, "clone"))
            prepared = ee_key(source, base_tag, work, log)
            ee_tag = "%s:%s" % (EE_REPOSITORY, prepared["key"])
            reused = image_exists(ee_tag) and not rebuild
            if not reused:
                dangling_before = dangling_images()
                say("EE_BASE_IMAGE=%s bash execution-environment/build.sh -t %s (log %s)" % (base_tag, ee_tag, log))
                build_started = time.monotonic()
                documented_build(source, base_tag, ee_tag, log)
                timings["ansible_builder"] = round(time.monotonic() - build_started, 1)
                prune(EE_REPOSITORY, prepared["key"], "ee-*.json")
                prune(BASE_REPOSITORY, key_b, "base-*.tar")
                # The build's own leftovers only (the other stages' final images); never a global prune.
                for image_id in sorted(dangling_images() - dangling_before):
                    podman("rmi", image_id, check=False)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        summary = {
            "image": ee_tag, "base_image": base_tag, "reused": reused, "ansible_builder": prepared["ansible_builder"],
            "containers_conf": podman_env()["CONTAINERS_CONF"], "cache": root, "log": log,
        }
        summary.update(inspect(ee_tag))
        timings["total"] = round(time.monotonic() - started, 1)
        summary["seconds"] = timings
        with open(os.path.join(root, "ee-%s.json" % prepared["key"]), "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=1)
        return summary


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="only say whether this machine can build (exit %d if not)" % SKIP_EXIT)
    group.add_argument("--key", action="store_true", help="print the base image's cache key")
    group.add_argument("--rebuild", action="store_true", help="build the execution environment even when its key exists")
    options = parser.parse_args(argv)
    try:
        if options.key:
            print(base_key())
            return 0
        if options.check:
            check_machine()
            print("ee-build: this machine can build the execution environment")
            return 0
        print(json.dumps(build(rebuild=options.rebuild), indent=1))
        return 0
    except CannotBuild as reason:
        print("SKIPPED: %s" % reason)
        return SKIP_EXIT


if __name__ == "__main__":
    sys.exit(main())
