# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release of the kubelet that will start, and the releases this collection's rules are tested at.

Kubelet knows its own release: the program the node's service runs says it (``kubelet --version``: ``Kubernetes
v1.34.4``; ``k3s --version``: ``k3s version v1.34.4+k3s1 (...)``; ``rke2 --version``; ``k0s version``:
``v1.34.4+k0s.0``), and MicroK8s' snap says it in ``meta/snap.yaml``. The binary is the one on disk now, so after an
upgrade across a reboot it is the kubelet about to start, not the one that wrote the checkpoint (nor the one the
Node object names). Release binaries are built with ``-trimpath``: their Go build info carries no ``-ldflags``, so
the stamped release lives only in the version variables: kubelet's is read from the binary where the linker put it
(``_golang.stamp``, a few milliseconds, nothing run), and the program is asked when the file cannot tell, as the
embedding distributions' always are (a time limit, no shell, no input; never a program of another name:
``_common.node_files.VERSION_ARGUMENTS``). An explicit ``kubelet_release`` wins.

Every rule that differs by release is data keyed by the release it starts at (``_kubelet.flags``:
``REMOVED_FLAGS``, ``ADDED_GATES``; ``_checkpoint.model``: ``ERA_RELEASES``), judged here at the release found
(:func:`rules_release`), or at every supported release when none is known. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import OptionError
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import NodeFiles, read_node_text, version_arguments
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record

__all__ = [
    "SUPPORTED_RELEASES",
    "KubeletRelease",
    "parse_release",
    "release_key",
    "release_minor",
    "split_releases",
    "read_release",
    "rules_release",
    "UNTESTED_CHOICES",
    "ReleaseOptionError",
    "UNKNOWN",
]

# The releases kubelet's own code judges in CI (tests/kubelet_judge): the tested matrix.
SUPPORTED_RELEASES = ("1.34", "1.35", "1.36", "1.37")
UNTESTED_CHOICES = ("refuse", "nearest")
_VERSION = re.compile(r"\bv?(\d+)\.(\d+)\.(\d+)([-+][0-9A-Za-z.+-]*)?")
MAX_SHOWN = 80  # characters of a program's answer shown
_PRERELEASE = re.compile(r"^v\d+\.\d+\.\d+-")
_SNAP_VERSION = re.compile(r"^version:[ \t]*['\"]?([^'\"\s]+)", re.MULTILINE)


class KubeletRelease(Record, frozen=True):
    """The kubelet that will start: ``version`` as it says it (``v1.34.4``), ``release`` (``1.34``), and ``source``:
    where that came from, or why it is unknown."""

    version: Optional[str]
    release: Optional[str]
    source: str

    @property
    def known(self) -> bool:
        return self.release is not None

    @property
    def prerelease(self) -> bool:
        """An alpha, beta or release candidate (``v1.37.0-rc.1``; semver's ``-`` suffix, not a distribution's ``+``)."""
        return bool(self.version and _PRERELEASE.match(self.version))

    @property
    def tested(self) -> bool:
        return self.release in SUPPORTED_RELEASES and not self.prerelease

    @property
    def untested_why(self) -> str:
        """Why kubelet's own code never judged this release here."""
        what = "a pre-release" if self.prerelease else "outside the releases"
        return "%s (%s to %s are tested)" % (what, SUPPORTED_RELEASES[0], SUPPORTED_RELEASES[-1])

    @property
    def name(self) -> str:
        """How messages name it: ``kubelet v1.35.4``."""
        return "kubelet %s" % (self.version or "v%s" % self.release)


UNKNOWN = KubeletRelease(None, None, "unknown")


def release_key(release: str) -> Tuple[int, ...]:
    """``1.35`` -> ``(1, 35)``, for comparing releases."""
    return tuple(int(part) for part in release.split("."))


def release_minor(release: str) -> int:
    """``1.35`` -> ``35``: the minor release, which the rules of each release are keyed by."""
    return release_key(release)[1]


def parse_release(text: str) -> Optional[Tuple[str, str]]:
    """``(version, release)`` of the first ``vX.Y.Z`` in ``text`` (``k3s version v1.34.4+k3s1`` -> ``v1.34.4+k3s1``,
    ``1.34``), or None."""
    match = _VERSION.search(text or "")
    if match is None:
        return None
    return "v%s.%s.%s%s" % (match.group(1), match.group(2), match.group(3), match.group(4) or ""), "%s.%s" % match.group(1, 2)


def split_releases(first: str, releases: Sequence[str] = SUPPORTED_RELEASES) -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """The ``releases`` before ``first`` and from ``first`` on (``1.36`` -> 1.34, 1.35 | 1.36, 1.37)."""
    threshold = release_key(first)
    return (tuple(release for release in releases if release_key(release) < threshold),
            tuple(release for release in releases if release_key(release) >= threshold))


class ReleaseOptionError(OptionError):
    """The ``kubelet_release`` option names no release."""


def from_option(option: str) -> KubeletRelease:
    """The release an operator names (``kubelet_release: 1.34`` or ``v1.34.4``); :class:`ReleaseOptionError` for
    anything else."""
    text = option.strip()
    parsed = parse_release(text if text.count(".") >= 2 else text + ".0")
    if parsed is None or not re.match(r"^v?\d+\.\d+(\.\d+([-+][0-9A-Za-z.+-]*)?)?$", text):
        raise ReleaseOptionError("kubelet_release: %r is not a kubelet release such as 1.34 or v1.34.4" % option)
    return KubeletRelease(parsed[0] if text.count(".") >= 2 else None, parsed[1], "option kubelet_release")


def _said(files: NodeFiles, program: str) -> KubeletRelease:
    asked = "%s %s" % (program, " ".join(version_arguments(program) or ()))
    try:
        found = files.program_version(program)
    except OSError as error:
        why = getattr(error, "text", None) or "%s: %s" % (error.filename or program, error.strerror or error)
        return KubeletRelease(None, None, "unknown: %s" % why)
    output = printable(str(found.get("output", ""))[:MAX_SHOWN])
    parsed = parse_release(output) if found.get("rc") == 0 else None
    if parsed is None:
        return KubeletRelease(None, None, "unknown: %s said %r (exit status %s)" % (asked, output, found.get("rc")))
    if found.get("stamped"):  # read where kubelet's build stamped it, the variable --version prints (_golang.stamp)
        return KubeletRelease(parsed[0], parsed[1], "%s: %s, stamped in the binary (read without running it)" % (program, output))
    # A release remembered from an earlier answer of the same file (numa_drift_kubelet_versions): the version only.
    remembered = " (remembered: the same file said it earlier)" if found.get("remembered") else ""
    return KubeletRelease(parsed[0], parsed[1], "%s: %s%s" % (asked, output, remembered))


def printable(text: str) -> str:
    """``text`` with every character that is not printable escaped (a program's output is the node's words)."""
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text)


def _snap(files: NodeFiles, metadata: str) -> KubeletRelease:
    text, problem, _exists = read_node_text(files, metadata)
    match = _SNAP_VERSION.search(text or "")
    parsed = parse_release(match.group(1)) if match else None
    if parsed is None:
        return KubeletRelease(None, None, "unknown: %s" % (problem or "%s names no version" % metadata))
    return KubeletRelease(parsed[0], parsed[1], "%s: version %s" % (metadata, printable(match.group(1)[:MAX_SHOWN])))


def read_release(files: NodeFiles, program: Optional[str], metadata: Optional[str] = None, option: Optional[str] = None) -> KubeletRelease:
    """The release of the kubelet that will start: ``option`` when given, else what ``program`` (the binary the node's
    service runs) says, else its snap's ``metadata``; unknown, with why, when none can tell."""
    if option:
        return from_option(str(option))
    if metadata:
        return _snap(files, metadata)
    if program:
        return _said(files, program)
    return KubeletRelease(None, None, "unknown: no program that runs kubelet was found (no kubelet unit or wrapper)")


def rules_release(release: KubeletRelease, untested: str = "refuse") -> KubeletRelease:
    """The release whose rules judge the node: ``release`` when it is tested; for a release outside the tested matrix
    the nearest tested one when ``untested`` is ``nearest``; else unknown (every supported release's rules)."""
    if not release.known or release.tested:
        return release
    if untested != "nearest":
        return UNKNOWN
    if release.release in SUPPORTED_RELEASES:  # a pre-release of a tested release
        nearest = release.release
    elif release_key(release.release) < release_key(SUPPORTED_RELEASES[0]):
        nearest = SUPPORTED_RELEASES[0]
    else:
        nearest = SUPPORTED_RELEASES[-1]
    return KubeletRelease(None, nearest, "the tested release nearest to %s (option untested_release=nearest)" % release.name)
