# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A real Kubernetes control plane for the tests: kube-apiserver + etcd (+ kube-controller-manager) on loopback.

    python3 tests/integration/controlplane.py build   build the binaries when not cached; print their paths
    python3 tests/integration/controlplane.py run     start etcd + kube-apiserver, print the admin kubeconfig, wait
    python3 tests/integration/controlplane.py serve --dir D [--node N ...] [--controller-manager]
                                                       the same in D, detached from any test; D/state.json
                                                       once ready; stops when D/alive disappears
    python3 tests/integration/controlplane.py audit --dir D
                                                       the writes to Nodes and Leases so far (JSON)

kube-apiserver and kube-controller-manager are ``go build k8s.io/kubernetes/cmd/<component>`` at
``RELEASE`` (the newest supported minor), in a Go module made like the kubelet judge's
(tests/kubelet_judge/build.py: ``require k8s.io/kubernetes <release>`` plus one ``replace`` per staging
module), version stamped, cached under ``~/.cache/nodeops-numa-drift/kube-apiserver/<release>/``
(``XDG_CACHE_HOME`` honoured). etcd is Debian's ``etcd-server`` (3.4; tests/integration/requirements.sh
installs it), which kube-apiserver v1.37 accepts.

Everything listens on 127.0.0.1 only, on free ports, with its data in a temporary directory removed
at stop. Authentication: a static token file (``--token-auth-file``: one admin token in
``system:masters``, which the tests and the kubelet stand-ins use, and one token per real kubelet,
``system:node:<name>`` in ``system:nodes``) and ServiceAccount tokens (key made with openssl);
authorization: ``Node,RBAC`` with the ``NodeRestriction`` admission plugin, as kubeadm sets them, so a
kubelet may write only its own Node and a ServiceAccount has exactly what its bindings grant.

kube-controller-manager (``controller_manager=True``, the VM scenarios) runs only the node lifecycle
controller: it is what turns a Node whose kubelet stopped posting status (a reboot) ``NotReady``
(status ``Unknown``) in a real cluster, after ``--node-monitor-grace-period`` (20 s here).
"""

from __future__ import annotations

import argparse
import calendar
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kubelet_judge"))

import build as judge_build  # noqa: E402  pylint: disable=wrong-import-position

RELEASE = "v1.37.2"
CACHE_ROOT = os.path.join(os.path.dirname(judge_build.CACHE_ROOT), "kube-apiserver")
# Bump when the way the binary is made changes: the old one is rebuilt.
BUILD_RECIPE = "1"
VERSION_FLAG = "-X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitTreeState=clean"
ADMIN_USER = "numa-drift-admin"
START_TIMEOUT = float(os.environ.get("NUMA_DRIFT_APISERVER_TIMEOUT", "180"))


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message names what is missing."""


def log(message: str) -> None:
    print("controlplane: %s" % message, file=sys.stderr, flush=True)


COMPONENTS = ("kube-apiserver", "kube-controller-manager")
NODE_MONITOR_GRACE = "20s"


def binary_path(release: str = RELEASE, component: str = "kube-apiserver") -> str:
    return os.path.join(CACHE_ROOT, release, "bin", "%s-r%s" % (component, BUILD_RECIPE))


def build(release: str = RELEASE, component: str = "kube-apiserver") -> str:
    """The path of ``component`` (kube-apiserver, kube-controller-manager) at ``release``, built when not cached."""
    return build_components(release, (component,))[component]


def build_components(release: str = RELEASE, components: Sequence[str] = COMPONENTS) -> Dict[str, str]:
    """The paths of ``components`` at ``release``, the missing ones built under one hold of the Go build lock
    (so another builder cannot slip in between kube-apiserver and kube-controller-manager)."""
    targets = {component: binary_path(release, component) for component in components}
    with judge_build.go_build_turn(lambda: all(os.access(target, os.X_OK) for target in targets.values())) as mine:
        for component, target in targets.items():
            if mine and not os.access(target, os.X_OK):
                _build_locked(release, component, target)
    return targets


def _build_locked(release: str, component: str, target: str) -> None:
    started = time.monotonic()
    os.makedirs(judge_build.CACHE_ROOT, exist_ok=True)
    env = judge_build.go_env(CACHE_ROOT)
    gomod = judge_build.kubernetes_gomod(judge_build.find_go((1, 0)), release, env)
    go = judge_build.find_go(judge_build.go_line(gomod))
    src = os.path.join(CACHE_ROOT, release, "src")
    os.makedirs(src, exist_ok=True)
    with open(os.path.join(src, "go.mod"), "w", encoding="utf-8") as handle:
        handle.write(judge_build.consumer_gomod("nodeops.invalid/kube-apiserver", release, gomod))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = "%s.%d.partial" % (target, os.getpid())
    judge_build.run_go(go, ["build", "-trimpath", "-ldflags=-s -w " + VERSION_FLAG % release, "-o", partial,
                            "k8s.io/kubernetes/cmd/" + component], cwd=src, env=env)
    os.replace(partial, target)
    log("built %s %s in %.0f s" % (component, release, time.monotonic() - started))


def find_etcd() -> str:
    for candidate in (os.environ.get("ETCD"), shutil.which("etcd"), "/usr/bin/etcd"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ControlPlaneError("etcd not found: install Debian's etcd-server (bash tests/integration/requirements.sh)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# kind -> (API path prefix, plural) for what the tests apply.
RESOURCES = {
    "Namespace": ("/api/v1", "namespaces"), "ServiceAccount": ("/api/v1", "serviceaccounts"),
    "ConfigMap": ("/api/v1", "configmaps"), "Node": ("/api/v1", "nodes"), "Pod": ("/api/v1", "pods"),
    "Lease": ("/apis/coordination.k8s.io/v1", "leases"),
    "ClusterRole": ("/apis/rbac.authorization.k8s.io/v1", "clusterroles"),
    "ClusterRoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings"),
    "Role": ("/apis/rbac.authorization.k8s.io/v1", "roles"),
    "RoleBinding": ("/apis/rbac.authorization.k8s.io/v1", "rolebindings"),
}


def collection_path(document: Dict[str, Any]) -> str:
    prefix, plural = RESOURCES[document["kind"]]
    namespace = document["metadata"].get("namespace")
    return "%s/namespaces/%s/%s" % (prefix, namespace, plural) if namespace else "%s/%s" % (prefix, plural)


def object_path(document: Dict[str, Any]) -> str:
    return "%s/%s" % (collection_path(document), document["metadata"]["name"])


# The API server's own audit log: every write to a Lease or a Node (not its status), with the object
# written (RequestResponse), so tests can order who held the lock and when a Node was cordoned.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived", "ResponseStarted"],
    "rules": [
        {"level": "RequestResponse", "verbs": ["create", "update", "patch", "delete"],
         "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}, {"group": "", "resources": ["nodes"]}]},
        {"level": "None"},
    ],
}


def audit_entry(event: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """A successful write of the audit log as the API stand-in's ``/_sandbox/audit`` lists it."""
    if (event.get("responseStatus") or {}).get("code", 0) >= 300 or event.get("stage") != "ResponseComplete":
        return None
    ref = event.get("objectRef") or {}
    kind = {"leases": "Lease", "nodes": "Node"}.get(ref.get("resource", ""))
    if kind is None or ref.get("subresource"):
        return None
    stamp = event["stageTimestamp"]
    moment = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + stamp[19:].rstrip("Z"))
    entry: Dict[str, Any] = {"time": moment, "verb": event["verb"], "kind": kind, "namespace": ref.get("namespace", ""),
                             "name": ref.get("name"), "user": (event.get("user") or {}).get("username")}
    obj = event.get("responseObject") or {}
    if event["verb"] != "delete" and obj.get("kind") == kind:
        entry["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion")
        if kind == "Lease":
            entry["holder"] = (obj.get("spec") or {}).get("holderIdentity")
        else:
            entry["unschedulable"] = bool((obj.get("spec") or {}).get("unschedulable"))
            entry["annotations"] = (obj.get("metadata") or {}).get("annotations") or {}
    return entry


def read_audit(path: str) -> List[Dict[str, Any]]:
    """Every successful write to a Lease or a Node in the audit log at ``path``, in order."""
    entries = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            entry = audit_entry(json.loads(line)) if line.strip() else None
            if entry is not None:
                entries.append(entry)
    return sorted(entries, key=lambda entry: entry["time"])


def write_private(path: str, text: str) -> None:
    """Write ``text`` to ``path`` readable by the owner only, atomically (a reader sees the old file or
    the whole new one: kubeconfigs and the state file are read by other processes while written)."""
    partial = "%s.%d.partial" % (path, os.getpid())
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(partial, 0o600)
    os.replace(partial, path)


def kubeconfig_text(server: str, ca_file: str, token: str, user: str) -> str:
    """A kubeconfig (JSON is YAML) for ``server`` with a bearer token."""
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": user, "preferences": {},
        "clusters": [{"name": "numa-drift-test", "cluster": {"server": server, "certificate-authority": ca_file}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": "numa-drift-test", "user": user}}],
    }, indent=2)


class ControlPlane:
    """etcd + kube-apiserver on loopback; ``start()`` / ``stop()``; an admin token, ServiceAccount tokens."""

    def __init__(self, workdir: Optional[str] = None, release: str = RELEASE, nodes: Sequence[str] = (),
                 controller_manager: bool = False) -> None:
        self.release = release
        self._own_dir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="numa-drift-cp-")
        self.admin_token = secrets.token_hex(16)
        # One token per real kubelet: user system:node:<name> in system:nodes (the Node authorizer's identity).
        self.node_tokens = {name: secrets.token_hex(16) for name in nodes}
        self.controller_manager = controller_manager
        self.port = 0
        self.etcd_port = 0
        self.procs: List[subprocess.Popen] = []
        self.timings: Dict[str, float] = {}

    @classmethod
    def attach(cls, state: Dict[str, Any]) -> "ControlPlane":
        """A client of a control plane another process serves (``serve``'s state.json); it stops nothing."""
        plane = cls(workdir=state["workdir"])
        plane.port = state["port"]
        plane.admin_token = state["admin_token"]
        plane.node_tokens = dict(state["node_tokens"])
        return plane

    def state(self) -> Dict[str, Any]:
        """What a client needs to reach this control plane (``attach``)."""
        return {"workdir": self.workdir, "server": self.server, "port": self.port, "ca_file": self.ca_file,
                "admin_token": self.admin_token, "node_tokens": self.node_tokens, "pid": os.getpid()}

    # -- paths -------------------------------------------------------------------------------------
    def path(self, *parts: str) -> str:
        return os.path.join(self.workdir, *parts)

    @property
    def server(self) -> str:
        return "https://127.0.0.1:%d" % self.port

    @property
    def ca_file(self) -> str:
        # --cert-dir's self-signed serving certificate is its own CA.
        return self.path("certs", "apiserver.crt")

    def kubeconfig(self, name: str, token: str) -> str:
        """Write a kubeconfig for ``token`` under the work dir; return its path."""
        target = self.path("kubeconfig-%s.yml" % name)
        write_private(target, kubeconfig_text(self.server, self.ca_file, token, name))
        return target

    # -- lifecycle ---------------------------------------------------------------------------------
    # -- the API, as admin ---------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, token: Optional[str] = None) -> Tuple[int, Any]:
        """(HTTP status, parsed body) of one request; an error's Status object as the body."""
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.server + path, data=data, method=method, headers={
            "Authorization": "Bearer " + (token or self.admin_token), "Accept": "application/json",
            "Content-Type": "application/json"})
        context = ssl.create_default_context(cafile=self.ca_file)
        try:
            with urllib.request.urlopen(request, timeout=15, context=context) as response:
                return response.status, json.loads(response.read().decode("utf-8") or "null")
        except urllib.error.HTTPError as error:
            text = error.read().decode("utf-8", "replace")
            try:
                return error.code, json.loads(text)
            except ValueError:
                return error.code, text

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """An admin request that must succeed; its parsed body."""
        status, answer = self.request(method, path, body)
        if status >= 300:
            raise ControlPlaneError("%s %s: HTTP %d %s" % (method, path, status, answer))
        return answer

    def apply(self, document: Dict[str, Any]) -> Dict[str, Any]:
        """Create ``document`` or replace what is there (RBAC objects, ServiceAccounts, ConfigMaps, Leases)."""
        path = object_path(document)
        status, current = self.request("GET", path)
        if status == 404:
            return self.call("POST", collection_path(document), document)
        body = json.loads(json.dumps(document))
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        return self.call("PUT", path, body)

    def delete(self, document: Dict[str, Any]) -> None:
        status, answer = self.request("DELETE", object_path(document))
        if status not in (200, 202, 404):
            raise ControlPlaneError("DELETE %s: HTTP %d %s" % (object_path(document), status, answer))

    def audit(self) -> List[Dict[str, Any]]:
        """Every successful write to a Lease or a Node so far, in order (the API server's audit log)."""
        return read_audit(self.path("audit.log"))

    def service_account_token(self, namespace: str, name: str, seconds: int = 7200) -> str:
        """A token of the ServiceAccount (TokenRequest, as kubectl create token)."""
        answer = self.call("POST", "/api/v1/namespaces/%s/serviceaccounts/%s/token" % (namespace, name),
                           {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                            "spec": {"expirationSeconds": seconds}})
        return answer["status"]["token"]

    def _spawn(self, name: str, argv: Sequence[str]) -> subprocess.Popen:
        out = open(self.path("%s.log" % name), "ab")  # pylint: disable=consider-using-with
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        out.close()
        self.procs.append(proc)
        return proc

    def _log_tail(self, name: str, size: int = 3000) -> str:
        try:
            with open(self.path("%s.log" % name), "rb") as handle:
                return handle.read()[-size:].decode("utf-8", "replace")
        except OSError:
            return ""

    def _write_credentials(self) -> None:
        os.makedirs(self.path("certs"), exist_ok=True)
        subprocess.run(["openssl", "genrsa", "-out", self.path("sa.key"), "2048"], check=True, capture_output=True)
        subprocess.run(["openssl", "rsa", "-in", self.path("sa.key"), "-pubout", "-out", self.path("sa.pub")],
                       check=True, capture_output=True)
        with open(self.path("tokens.csv"), "w", encoding="utf-8") as handle:
            handle.write('%s,%s,uid-admin,"system:masters"\n' % (self.admin_token, ADMIN_USER))
            for name, token in sorted(self.node_tokens.items()):
                handle.write('%s,system:node:%s,uid-node-%s,"system:nodes"\n' % (token, name, name))
        os.chmod(self.path("tokens.csv"), 0o600)
        with open(self.path("audit-policy.json"), "w", encoding="utf-8") as handle:
            json.dump(AUDIT_POLICY, handle)

    def start(self) -> "ControlPlane":
        started = time.monotonic()
        apiserver = build(self.release)
        self.timings["build"] = time.monotonic() - started
        etcd = find_etcd()
        self._write_credentials()
        self.etcd_port, peer_port, self.port = free_port(), free_port(), free_port()
        started = time.monotonic()
        self._spawn("etcd", [
            etcd, "--name", "numa-drift", "--data-dir", self.path("etcd"),
            "--listen-client-urls", "http://127.0.0.1:%d" % self.etcd_port,
            "--advertise-client-urls", "http://127.0.0.1:%d" % self.etcd_port,
            "--listen-peer-urls", "http://127.0.0.1:%d" % peer_port,
            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer_port,
            "--initial-cluster", "numa-drift=http://127.0.0.1:%d" % peer_port,
            "--log-level", "warn",
        ])
        self._spawn("kube-apiserver", [
            apiserver,
            "--etcd-servers", "http://127.0.0.1:%d" % self.etcd_port,
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
            "--secure-port", str(self.port), "--cert-dir", self.path("certs"),
            "--token-auth-file", self.path("tokens.csv"),
            "--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction",
            "--service-account-issuer", "https://kubernetes.default.svc",
            "--service-account-key-file", self.path("sa.pub"),
            "--service-account-signing-key-file", self.path("sa.key"),
            "--service-cluster-ip-range", "10.96.0.0/24",
            "--enable-priority-and-fairness=false", "--endpoint-reconciler-type", "none",
            "--audit-policy-file", self.path("audit-policy.json"), "--audit-log-path", self.path("audit.log"),
            "--audit-log-format", "json", "--audit-log-mode", "blocking",
            "--v", "1",
        ])
        self.wait_ready()
        self.timings["start"] = time.monotonic() - started
        log("kube-apiserver %s ready on %s in %.1f s" % (self.release, self.server, self.timings["start"]))
        if self.controller_manager:
            self._start_controller_manager()
        return self

    def _start_controller_manager(self) -> None:
        """kube-controller-manager with the node lifecycle controller only (it marks silent Nodes NotReady)."""
        self._spawn("kube-controller-manager", [
            build(self.release, "kube-controller-manager"),
            "--kubeconfig", self.kubeconfig("controller-manager", self.admin_token),
            "--controllers", "node-lifecycle-controller", "--leader-elect=false",
            "--bind-address", "127.0.0.1", "--secure-port", str(free_port()),
            "--node-monitor-period", "2s", "--node-monitor-grace-period", NODE_MONITOR_GRACE,
            "--v", "1",
        ])

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        last = ""
        while time.monotonic() < deadline:
            for name, proc in zip(("etcd", "kube-apiserver"), self.procs[:2]):
                if proc.poll() is not None:
                    tail = self._log_tail(name)
                    self.stop()
                    raise ControlPlaneError("%s exited (%s) before readyz:\n%s" % (name, proc.returncode, tail))
            request = urllib.request.Request(self.server + "/readyz", headers={"Authorization": "Bearer " + self.admin_token})
            try:
                with urllib.request.urlopen(request, timeout=5, context=context) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.5)
        tail = self._log_tail("kube-apiserver")
        self.stop()
        raise ControlPlaneError("kube-apiserver not ready after %.0f s (%s):\n%s" % (START_TIMEOUT, last, tail))

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs = []
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "ControlPlane":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


RBAC_FILE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "extensions", "rbac", "nodeops-numa-drift.yml")
# The optional extra rules of remediate_drain=true, bound to the same ServiceAccount.
DRAIN_RBAC_FILE = os.path.join(os.path.dirname(RBAC_FILE), "nodeops-numa-drift-drain.yml")
SERVICE_ACCOUNT = ("kube-system", "nodeops-numa-drift")


def rbac_documents(path: str = RBAC_FILE) -> List[Dict[str, Any]]:
    """The RBAC objects the collection ships (extensions/rbac/nodeops-numa-drift.yml, or ``path``: a v1 List)."""
    import yaml  # pylint: disable=import-outside-toplevel  # only where the tests' Python has PyYAML

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)["items"]


def shipped_service_account_token(plane: ControlPlane) -> str:
    """The shipped RBAC objects applied; a token of their ServiceAccount (bound to exactly those roles)."""
    for document in rbac_documents():
        plane.apply(document)
    return plane.service_account_token(*SERVICE_ACCOUNT)


def serve(directory: str, nodes: Sequence[str], controller_manager: bool, alive: str, max_lifetime: float) -> int:
    """Run a control plane in ``directory`` until ``alive`` disappears, SIGTERM, or ``max_lifetime`` seconds.

    ``directory/state.json`` appears once kube-apiserver is ready and disappears at stop; etcd's data of an
    earlier run in the same directory is removed first (every run starts with an empty cluster)."""
    os.makedirs(directory, exist_ok=True)
    shutil.rmtree(os.path.join(directory, "etcd"), ignore_errors=True)
    state_file = os.path.join(directory, "state.json")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(state_file)
    stopping: List[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopping.append(signum))
    plane = ControlPlane(workdir=directory, nodes=nodes, controller_manager=controller_manager)
    plane.start()
    try:
        write_private(state_file, json.dumps(plane.state()))
        deadline = time.monotonic() + max_lifetime
        while not stopping and os.path.exists(alive) and time.monotonic() < deadline:
            exited = [proc.args[0] for proc in plane.procs if proc.poll() is not None]
            if exited:
                log("exited by itself: %s (logs in %s)" % (", ".join(exited), directory))
                return 1
            time.sleep(1)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(state_file)
        plane.stop()
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("action", choices=("build", "run", "serve", "audit"))
    parser.add_argument("--dir", help="serve, audit: the control plane's directory")
    parser.add_argument("--node", action="append", default=[], help="serve: a real kubelet's Node name (its token)")
    parser.add_argument("--controller-manager", action="store_true", help="serve: also the node lifecycle controller")
    parser.add_argument("--exit-if-missing", help="serve: stop when this file disappears (default DIR/alive)")
    parser.add_argument("--max-lifetime", type=float, default=7200.0, help="serve: stop after this many seconds")
    args = parser.parse_args(argv)
    if args.action == "build":
        for path in build_components().values():
            print(path)
        return 0
    if args.action == "audit":
        if not args.dir:
            parser.error("audit needs --dir")
        json.dump(read_audit(os.path.join(args.dir, "audit.log")), sys.stdout, indent=1)
        return 0
    if args.action == "serve":
        if not args.dir:
            parser.error("serve needs --dir")
        directory = os.path.abspath(args.dir)
        return serve(directory, args.node, args.controller_manager,
                     args.exit_if_missing or os.path.join(directory, "alive"), args.max_lifetime)
    with ControlPlane() as plane:
        print(plane.kubeconfig("admin", plane.admin_token), flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
