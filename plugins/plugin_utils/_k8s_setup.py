# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What to say when the Kubernetes client cannot be set up from a kubeconfig: which file (the one named, else the one
the client falls back to: ``K8S_AUTH_KUBECONFIG``, ``$KUBECONFIG``, ``~/.kube/config``), what is wrong with it, and
the setting that names it (``remediate_kubeconfig``/``remediate_kube_context`` for the role and playbooks, the
``kubeconfig``/``context`` options of a ``k8s_nodes`` inventory source). The client's own words
(``Invalid kube-config file. No configuration found.``) name neither.
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Tuple

# The settings that name the kubeconfig and its context in the role and the playbooks.
ROLE_SETTINGS = ("remediate_kubeconfig", "remediate_kube_context")
_CLIENT_PREFIX = "Could not create API client: "


def kubeconfig_in_use(kubeconfig: Optional[str], setting: str, environ: Optional[Mapping[str, str]] = None) -> Tuple[str, str]:
    """``(path, why this file)``: ``kubeconfig`` when set, else the file the Kubernetes client reads by default."""
    environ = os.environ if environ is None else environ
    if kubeconfig:
        return os.path.expanduser(kubeconfig), setting
    if environ.get("K8S_AUTH_KUBECONFIG"):
        return os.path.expanduser(environ["K8S_AUTH_KUBECONFIG"]), "K8S_AUTH_KUBECONFIG; %s is not set" % setting
    if environ.get("KUBECONFIG"):
        return os.path.expanduser(environ["KUBECONFIG"]), "$KUBECONFIG; %s is not set" % setting
    return os.path.expanduser("~/.kube/config"), "the default; %s is not set" % setting


def file_problem(path: str) -> Optional[str]:
    """Why ``path`` cannot be a kubeconfig file (missing, not a file, unreadable), or ``None``."""
    if os.pathsep in path:
        return None  # $KUBECONFIG's list of files: the client merges them, each may be missing
    if not os.path.lexists(path):
        return "does not exist"
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        return "cannot be read (%s)" % (error.strerror or error)
    return None


def kubeconfig_failure(kubeconfig: Optional[str], context: Optional[str], reason: str, config_error: bool = True,
                       settings: Tuple[str, str] = ROLE_SETTINGS, environ: Optional[Mapping[str, str]] = None) -> str:
    """One sentence for a client that could not be set up: the file, why it was that file, what is wrong, what to set.
    ``config_error``: the client refused the configuration (else it could not reach the server it names)."""
    environ = os.environ if environ is None else environ
    setting, context_setting = settings
    reason = reason[len(_CLIENT_PREFIX):] if reason.startswith(_CLIENT_PREFIX) else reason
    reason = reason.strip().splitlines()[0] if reason.strip() else "no reason given"
    if not kubeconfig and environ.get("K8S_AUTH_HOST") and environ.get("K8S_AUTH_API_KEY"):
        return "cannot use the API server %s (K8S_AUTH_HOST and K8S_AUTH_API_KEY; %s is not set): %s" % (
            environ["K8S_AUTH_HOST"], setting, reason)
    path, why = kubeconfig_in_use(kubeconfig, setting, environ)
    used = "the kubeconfig %s (%s)" % (path, why)
    if context:
        used += " with the context %r (%s)" % (context, context_setting)
    problem = file_problem(path)
    if not (problem or config_error):
        return "cannot reach the Kubernetes API with %s: %s" % (used, reason)
    said = "%s %s" % (used, problem) if problem else "cannot use %s: %s" % (used, reason)
    return "%s; set %s to a readable kubeconfig file of the cluster and %s to one of its contexts (unset: its current context)" % (
        said, setting, context_setting)
