# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How kubelet is started on a node (:class:`KubeletLaunch`), and the systemd services a profile reads.

What every distribution profile shares: the record it returns, which of a distribution's units runs
(enabled first), its command and the files it was read from. Reads only; stdlib only, Python >= 3.9.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import (
    NodeFiles,
    list_dir,
    node_join,
)
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.unitfile import Arg
from ansible_collections.nodeops.numa_drift.plugins.module_utils._kubelet.systemd import (
    UNIT_DIRS,
    ServiceDefinition,
    load_service,
)

__all__ = [
    "KubeletLaunch",
    "service_reads",
]

# systemctl enable links a unit into a target's .wants/ or .requires/ under /etc/systemd/system.
ENABLED_LINK_DIR = "/etc/systemd/system"


class KubeletLaunch(Record, frozen=True):
    """How kubelet is started on the node.

    ``args``: kubelet's command line after the program name, each word with its origin.
    ``dropin_redirects``: ``(node path in the drop-in dir, node path of its real source)``: files
    a wrapper copies there at its next start (k3s/RKE2 ``config=`` and ``config-dir=``).
    ``default_config``: the config file to read when the command line names none (kubeadm
    without a unit: ``<root dir>/config.yaml``). ``problems`` leave kubelet's configuration unknown.
    ``program``: the binary the service runs kubelet with (kubelet itself, or the k3s, RKE2 or k0s binary that
    carries it), asked its release; ``release_metadata``: a file that says the release instead (MicroK8s' snap).
    """

    distribution: str
    service: Optional[str]
    args: Tuple[Arg, ...] = ()
    sources: Tuple[str, ...] = ()
    problems: Tuple[str, ...] = ()
    dropin_redirects: Tuple[Tuple[str, str], ...] = ()
    default_config: Optional[str] = None
    found: bool = True
    notes: Tuple[str, ...] = ()
    program: Optional[str] = None
    release_metadata: Optional[str] = None


def service_reads(units: Sequence[str], follow: Sequence[str]) -> List[Dict[str, Any]]:
    """What :func:`_first_service` reads of the services ``units`` (names without ``.service``): each unit file in
    systemd's directories, its drop-ins, the environment files they name, and whether it is enabled; the texts
    followed with ``follow`` (the profile's own follows) besides the environment files."""
    names = ",".join(unit + ".service" for unit in units)
    directories = ",".join(UNIT_DIRS)
    follows = ["environment-file", "exec-program"] + list(follow)
    return [
        {"read": "{%s}/{%s}" % (directories, names), "follow": follows},
        {"list": "{%s}/{%s}.d" % (directories, names), "entries": ["*.conf"], "follow": follows},
        {"stat": "%s/*.{wants,requires}/{%s}" % (ENABLED_LINK_DIR, names)},
    ]


def _is_enabled(files: NodeFiles, unit: str) -> bool:
    """Whether ``systemctl enable`` linked ``unit`` into some ``<target>.wants/`` or ``.requires/``."""
    entries, _problem = list_dir(files, ENABLED_LINK_DIR, ENABLED_LINK_DIR)
    return any(
        files.lexists(node_join(ENABLED_LINK_DIR, entry, unit))
        for entry in entries or ()
        if entry.endswith((".wants", ".requires"))
    )


def _first_service(files: NodeFiles, names: Sequence[str]) -> Optional[ServiceDefinition]:
    """The first of ``names`` that is enabled, else the first that exists.

    RKE2's tarball and rpm install both ``rke2-server`` and ``rke2-agent`` units; only the
    enabled one runs (docs.rke2.io "Installation Methods": lib holds the server and agent units).
    """
    found = [service for service in (load_service(files, name + ".service") for name in names) if service.found]
    enabled = [service for service in found if _is_enabled(files, service.name)]
    return (enabled or found or [None])[0]


def _command_words(service: Optional[ServiceDefinition]) -> List[Arg]:
    return list(service.command) if service else []


def _service_sources(service: Optional[ServiceDefinition]) -> List[str]:
    if service is None:
        return []
    return [service.unit_path] + list(service.dropins) + list(service.env_files)
