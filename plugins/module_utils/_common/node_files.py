# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node's files: the one way the engine reaches them, on the node and on the controller (docs/safety.md).

A node path (``/var/lib/kubelet/config.yaml``) is what kubelet and systemd see. :class:`NodeFiles` is the
interface the engine reads a node through: resolve a node path with the node's symbolic links, the kind of
what is there, a link's target, a directory's names, a regular file's bytes up to a limit, the text of a
file kubelet or systemd reads, and what a kubelet program says of its own release. It rests on four
primitives, each a plain JSON-ready record: what ``lstat`` says of a path (:meth:`NodeFiles.stat`), a
directory's names (:meth:`NodeFiles.names`), a regular file's first bytes (:meth:`NodeFiles.content`), the
first line a program prints when asked its version (:meth:`NodeFiles.version`). Everything else (the resolver, the refusals, the limits, every
error's words) is written once here on top of them, so the engine reads a node the same way whichever
implementation answers:

* :class:`HostFiles`: the real filesystem under ``root`` (``/`` on the node itself, ``/host`` in a debug
  container, a temporary directory in tests);
* on the controller, the node's answer held in memory (``_common.answered_files``): the primitives the node
  reader met on the node, replayed.

Symbolic links resolve as on the node: an absolute target is a node path (it continues from ``root``, never
from the machine's own ``/``), a relative one from the link's directory, ``..`` never climbs above ``root``,
more than :data:`MAX_SYMLINKS` links is ``ELOOP``. A regular file's content is read with ``O_NOFOLLOW |
O_NONBLOCK`` and checked with ``fstat``, so a FIFO, device or socket is a named error at once, never a hang.
What kubelet and systemd read as text passes ``_common.credentials``: a key, certificate or kubeconfig is
withheld, never read, and credential values are redacted before the engine (or the controller) sees them.

Stdlib only, Python >= 3.9, and nothing of this collection is imported: the node reader carries this
file's text (``plugins/plugin_utils/_snapshot.py``), with ``_common.credentials`` and ``_node.plan_reader``.
"""

from __future__ import annotations

import errno
import os
import posixpath
import select
import signal
import stat
import time

TYPE_CHECKING = False  # the node reader imports no more than it runs: typing is for the annotations only
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.credentials import redact, withheld_content, withheld_name
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.stamp import stamped_release

__all__ = [
    "MAX_SYMLINKS",
    "READ_LIMIT",
    "MAX_TEXT_BYTES",
    "NodeFiles",
    "HostFiles",
    "NotRegularFileError",
    "FileTooLargeError",
    "WithheldError",
    "NotTextError",
    "NotAProgramError",
    "VERSION_ARGUMENTS",
    "STAMPED_PROGRAMS",
    "program_release",
    "version_arguments",
    "node_join",
    "under_root",
    "read_regular_file",
    "open_regular_file",
    "list_dir",
    "read_node_text",
]

MAX_SYMLINKS = 40  # the kernel's limit on links in one resolution (path_resolution(7), ELOOP beyond)
# The most any reader of the engine asks of one file (the checkpoint, sysfs, kubelet's files: 4 MiB each): a
# file's content is read up to it and one byte more, so each reader applies its own limit to the same bytes.
READ_LIMIT = 4 * 1024 * 1024
MAX_TEXT_BYTES = READ_LIMIT
_CHUNK = 1024 * 1024
VERSION_SECONDS = 30.0  # kubelet --version: 30-50 ms of CPU natively, about a second in a TCG guest, more on a busy node
MAX_VERSION_LINE = 200
MAX_VERSION_OUTPUT = 64 * 1024  # bytes of a program's output read; the first line is kept
# The programs that run kubelet (or carry it) and how each says its release: ``kubelet --version``, ``k3s --version``,
# ``rke2 --version``, ``k0s version``, MicroK8s' ``kubelite --version``. No other program is ever run: a site's
# wrapper script might start kubelet whatever its arguments.
# The environment it runs in: nothing of this process's. Each of those programs is a Go binary whose start-up is the
# whole cost of saying its version: no collector and one processor for that (29 ms of CPU instead of 37 for kubelet).
VERSION_ENVIRONMENT = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C", "GOGC": "off", "GOMAXPROCS": "1"}
VERSION_ARGUMENTS = {"kubelet": ("--version",), "k3s": ("--version",), "rke2": ("--version",), "k0s": ("version",),
                     "kubelite": ("--version",)}
# Read for the release their build stamped (``_golang.stamp``), run only when the file cannot tell; the embedding
# distributions' programs stamp releases of their own beside kubelet's: always run.
STAMPED_PROGRAMS = ("kubelet",)

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFileError(OSError):
    """``path`` exists but is not a regular file (or is a symbolic link, which is never followed)."""

    def __init__(self, path: str, kind: str) -> None:
        self.text = "%s is %s, not a regular file" % (path, kind)
        super().__init__(errno.EINVAL, self.text, path)
        self.path = path
        self.kind = kind

    def __str__(self) -> str:
        return self.text


class FileTooLargeError(OSError):
    """``path`` holds more bytes than the reader's limit."""

    def __init__(self, path: str, limit: int) -> None:
        self.text = "%s is larger than %d bytes" % (path, limit)
        super().__init__(errno.EFBIG, self.text, path)
        self.path = path

    def __str__(self) -> str:
        return self.text


class WithheldError(OSError):
    """``path`` holds a key, certificate, kubeconfig or token: it is never read (nor sent anywhere)."""

    def __init__(self, path: str, why: str) -> None:
        self.why = "%s (a key, certificate, kubeconfig or token never leaves the node)" % why
        self.text = "%s is not read: %s" % (path, self.why)
        super().__init__(errno.EACCES, self.text, path)
        self.path = path

    def __str__(self) -> str:
        return self.text


class NotAProgramError(OSError):
    """``path`` is not, by its name, a program that runs kubelet (:data:`VERSION_ARGUMENTS`): it is never run."""

    def __init__(self, path: str) -> None:
        self.text = "%s is not run: only %s are asked their version (a site's wrapper might start kubelet whatever its arguments)" % (
            path, ", ".join(sorted(VERSION_ARGUMENTS)))
        super().__init__(errno.EPERM, self.text, path)

    def __str__(self) -> str:
        return self.text


class NotTextError(ValueError):
    """``path`` is not UTF-8 text (``why`` says how), so kubelet's and systemd's parsers cannot read it."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__("%s %s" % (path, why))
        self.why = why


def kind_of(mode: int) -> str:
    """What a file of type ``mode`` is, in words (``a FIFO (named pipe)``)."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "a file of type %o" % stat.S_IFMT(mode)


def node_join(*parts: str) -> str:
    """Join node path parts and normalise ``..`` so the result stays an absolute node path."""
    return posixpath.normpath(posixpath.join("/", *parts))


def _is_host_root(root: str) -> bool:
    return os.path.normpath(root or "/") == "/"


class NodeFiles(object):
    """A node's files under ``root``: the interface the engine reads a node through.

    Subclasses give the three primitives; every method here is built on them alone.
    """

    def __init__(self, root: str = "/") -> None:
        self.root = os.fspath(root) or "/"

    # ------------------------------------------------------------------ the primitives

    def stat(self, key: str) -> Dict[str, Any]:
        """What ``lstat`` says of the node path ``key`` (its parent already resolved): ``{"kind": "file"}``,
        ``dir``, ``{"kind": "link", "target": ...}``, ``absent``, ``{"kind": "other", "type": S_IFMT}`` or
        ``{"kind": "error", "errno": n, "error": text}``."""
        raise NotImplementedError

    def names(self, key: str) -> Dict[str, Any]:
        """The entry names of the directory ``key``: ``{"names": "a/b"}`` (joined by ``/``, the one character no
        name holds) or ``{"errno": n, "error": text}``."""
        raise NotImplementedError

    def version(self, key: str, arguments: Sequence[str], stamped: bool = False) -> Dict[str, Any]:
        """What the program ``key`` prints when run with ``arguments`` (its version): ``{"output": its first line,
        "rc": exit status, "identity": "dev:inode:size:mtime"}`` (the identity tells a program replaced since) or
        ``{"errno": n, "error": text}``; with ``stamped``, its file's stamped release when it has one (``"stamped": true``)."""
        raise NotImplementedError

    def content(self, key: str, text: bool) -> Dict[str, Any]:
        """The first :data:`READ_LIMIT` + 1 bytes of the regular file ``key`` and ``size``, the count read.

        Raw: ``{"data": str}`` (UTF-8) or ``{"base64": str}``. Text (``text``, what kubelet and systemd read):
        ``{"text": redacted str}``, ``{"withheld": why}``, ``{"binary": true}`` (NUL bytes) or
        ``{"undecodable": why}``; a file over the limit carries no text at all. ``{"errno", "error"}`` when it
        cannot be read, ``{"replaced": S_IFMT}`` when it is no longer a regular file.
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ paths

    def host(self, key: str) -> str:
        """Where this process finds the (resolved) node path ``key``: ``root`` + the node path; what messages name."""
        return key if _is_host_root(self.root) else os.path.join(self.root, key.lstrip("/"))

    def host_path(self, node_path: str, follow: bool = True) -> str:
        """Where this process finds ``node_path``: its links resolved under ``root`` (at ``/`` the kernel resolves them)."""
        if _is_host_root(self.root):
            return node_join(node_path)
        return self.host(self.resolve(node_join(node_path), follow))

    def resolve(self, node_path: str, follow: bool = True) -> str:
        """``node_path`` with every symbolic link on the way resolved under ``root`` (the last one only if ``follow``).

        A component that is missing or not a directory is kept as written (what is under it is looked up as
        the kernel would: nothing there). More than :data:`MAX_SYMLINKS` links is ``OSError(ELOOP)``, as on the node.
        """
        resolved: List[str] = []
        pending = [part for part in reversed(node_path.split("/")) if part]
        links = 0
        while pending:
            part = pending.pop()
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            if not pending and not follow:
                resolved.append(part)
                break
            found = self.stat("/" + "/".join(resolved + [part]))
            if found.get("kind") != "link":
                resolved.append(part)  # a missing component too: the rest is looked up as written
                continue
            links += 1
            if links > MAX_SYMLINKS:
                raise OSError(errno.ELOOP, "%s: too many levels of symbolic links under %s" % (node_path, self.root), node_path)
            target = str(found.get("target", ""))
            if target.startswith("/"):
                resolved = []
            pending.extend(part for part in reversed(target.split("/")) if part)
        return "/" + "/".join(resolved)

    def kind(self, node_path: str, follow: bool = True) -> str:
        """``file``, ``dir``, ``link`` (only without ``follow``), ``absent``, ``other`` or ``error``."""
        try:
            return str(self.stat(self.resolve(node_path, follow)).get("kind"))
        except OSError:
            return "error"

    def exists(self, node_path: str) -> bool:
        """``os.path.exists``: something is there once every link is followed."""
        return self.kind(node_path) in ("file", "dir", "other")

    def lexists(self, node_path: str) -> bool:
        """``os.path.lexists``: something is there, a link itself counting."""
        return self.kind(node_path, follow=False) in ("file", "dir", "link", "other")

    def isfile(self, node_path: str) -> bool:
        return self.kind(node_path) == "file"

    def isdir(self, node_path: str) -> bool:
        return self.kind(node_path) == "dir"

    def readlink(self, node_path: str) -> Optional[str]:
        """The target of the symbolic link at ``node_path`` (its directories resolved), None when it is none."""
        try:
            found = self.stat(self.resolve(node_path, follow=False))
        except OSError:
            return None
        return str(found["target"]) if found.get("kind") == "link" else None

    # ------------------------------------------------------------------ directories

    def listdir(self, node_path: str) -> List[str]:
        """Sorted entry names of a node directory (a link to one is followed), as ``os.listdir`` raises."""
        key = self.resolve(node_path)
        shown = self.host(key)
        found = self.stat(key)
        kind = found.get("kind")
        if kind == "absent":
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown)
        if kind == "error":
            raise _os_error(found, shown)
        if kind != "dir":
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), shown)
        listed = self.names(key)
        if "errno" in listed:
            raise _os_error(listed, shown)
        return sorted(name for name in str(listed.get("names", "")).split("/") if name)

    # ------------------------------------------------------------------ programs

    def program_version(self, node_path: str) -> Dict[str, Any]:
        """What the program at ``node_path`` (links followed, as systemd runs it) says of its version: the
        :meth:`version` record; ``OSError`` when it is not a program that runs kubelet by the name the node calls it
        (:data:`VERSION_ARGUMENTS`: nothing else is ever run), is not there, not a regular file or cannot run."""
        arguments = version_arguments(node_path)
        if arguments is None:
            raise NotAProgramError(node_path)
        key = self._regular(node_path, follow=True)
        found = self.version(key, arguments, stamped=program_name(node_path) in STAMPED_PROGRAMS)
        if "errno" in found:
            raise _os_error(found, self.host(key))
        return found

    # ------------------------------------------------------------------ regular files

    def _regular(self, node_path: str, follow: bool) -> str:
        """The resolved key of a regular file, or the error ``open`` would give for it."""
        key = self.resolve(node_path, follow)
        shown = self.host(key)
        found = self.stat(key)
        kind = found.get("kind")
        if kind == "file":
            return key
        if kind == "absent":
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown)
        if kind == "link":
            dangling = "" if self.exists(key) else "dangling "
            raise NotRegularFileError(shown, "a %ssymbolic link (to %s; not followed)" % (dangling, found.get("target")))
        if kind == "dir":
            raise NotRegularFileError(shown, "a directory")
        if kind == "other":
            raise NotRegularFileError(shown, kind_of(int(found.get("type", 0))))
        raise _os_error(found, shown)

    def _content(self, key: str, text: bool) -> Dict[str, Any]:
        found = self.content(key, text)
        if "errno" in found:
            raise _os_error(found, self.host(key))
        if "replaced" in found:
            raise NotRegularFileError(self.host(key), kind_of(int(found["replaced"])))
        return found

    def read_bytes(self, node_path: str, limit: int, follow: bool = False, truncate: bool = False) -> bytes:
        """The bytes of the regular file at ``node_path``, at most ``limit`` (<= :data:`READ_LIMIT`) of them.

        Raises ``FileNotFoundError`` when nothing is there, :class:`NotRegularFileError` for a symbolic link in
        the last component (unless ``follow``), a directory, FIFO, socket or device, :class:`FileTooLargeError`
        beyond ``limit`` (``truncate``: the first ``limit`` bytes instead), :class:`WithheldError` for a key or
        kubeconfig, ``OSError`` otherwise; every error names the path.
        """
        key = self._regular(node_path, follow)
        found = self._content(key, text=False)
        if "withheld" in found:
            raise WithheldError(self.host(key), str(found["withheld"]))
        if int(found.get("size", 0)) > limit and not truncate:
            raise FileTooLargeError(self.host(key), limit)
        return _raw_bytes(found)[:limit]

    def read_text(self, node_path: str, limit: int = MAX_TEXT_BYTES) -> str:
        """The text of a file kubelet or systemd reads (a symbolic link is followed), credentials redacted.

        Raises as :meth:`read_bytes`, :class:`WithheldError` for a key, certificate, kubeconfig or token,
        :class:`NotTextError` for a file that is not UTF-8 text.
        """
        key = self._regular(node_path, follow=True)
        found = self._content(key, text=True)
        shown = self.host(key)
        if "withheld" in found:
            raise WithheldError(shown, str(found["withheld"]))
        if int(found.get("size", 0)) > limit:
            raise FileTooLargeError(shown, limit)
        if found.get("binary"):
            raise NotTextError(shown, "holds NUL bytes: it is not a text file")
        if "undecodable" in found:
            raise NotTextError(shown, "is not UTF-8: %s" % found["undecodable"])
        return str(found.get("text", ""))


def _os_error(found: Dict[str, Any], shown: str) -> OSError:
    number = int(found.get("errno") or errno.EIO)
    return OSError(number, str(found.get("error") or os.strerror(number)), shown)


def _raw_bytes(found: Dict[str, Any]) -> bytes:
    if "base64" in found:
        import base64  # pylint: disable=import-outside-toplevel

        return base64.b64decode(str(found["base64"]))
    return str(found.get("data", "")).encode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------- the real filesystem


def _lstat_record(path: str) -> Dict[str, Any]:
    try:
        mode = os.lstat(path).st_mode
    except OSError as error:
        if error.errno == errno.ENOENT:
            return {"kind": "absent"}
        return {"kind": "error", "errno": error.errno, "error": error.strerror or str(error)}
    if stat.S_ISLNK(mode):
        try:
            return {"kind": "link", "target": os.readlink(path)}
        except OSError as error:
            return {"kind": "error", "errno": error.errno, "error": error.strerror or str(error)}
    if stat.S_ISDIR(mode):
        return {"kind": "dir"}
    if stat.S_ISREG(mode):
        return {"kind": "file"}
    return {"kind": "other", "type": stat.S_IFMT(mode)}


def _read_at_most(handle: int, size: int) -> bytes:
    """At most ``size`` bytes from ``handle``, read until end of file (procfs answers in pages)."""
    chunks: List[bytes] = []
    left = size
    while left > 0:
        chunk = os.read(handle, min(left, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _open_flags(follow: bool) -> int:
    return os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | (0 if follow else os.O_NOFOLLOW)


def _encoded(data: bytes) -> Dict[str, Any]:
    try:
        return {"data": data.decode("utf-8")}
    except UnicodeDecodeError:
        import base64  # pylint: disable=import-outside-toplevel

        return {"base64": base64.b64encode(data).decode("ascii")}


def text_record(node_path: str, data: bytes) -> Dict[str, Any]:
    """What a text read of ``node_path`` keeps of ``data`` (the first :data:`READ_LIMIT` + 1 bytes): nothing over
    the limit, a marker for binary or undecodable bytes, else the text with credentials redacted, or why it is
    withheld."""
    found: Dict[str, Any] = {"size": len(data)}
    if len(data) > READ_LIMIT:
        return found
    if b"\0" in data:
        return dict(found, binary=True)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return dict(found, undecodable=str(error))
    why = withheld_content(text)
    if why:
        return {"withheld": why}
    return dict(found, text=redact(text))


def raw_record(node_path: str, data: bytes) -> Dict[str, Any]:
    """What a raw read keeps of ``data``: the bytes (no credential is ever in sysfs, procfs or a checkpoint: a file
    whose text says it is a key or kubeconfig is withheld all the same)."""
    try:
        why = withheld_content(data.decode("utf-8"))
    except UnicodeDecodeError:
        why = None
    return {"withheld": why} if why else dict(_encoded(data), size=len(data))


class HostFiles(NodeFiles):
    """The node's files on the real filesystem under ``root``."""

    def stat(self, key: str) -> Dict[str, Any]:
        return _lstat_record(self.host(key))

    def names(self, key: str) -> Dict[str, Any]:
        try:
            return {"names": "/".join(sorted(os.listdir(self.host(key))))}
        except OSError as error:
            return {"errno": error.errno, "error": error.strerror or str(error)}

    def version(self, key: str, arguments: Sequence[str], stamped: bool = False) -> Dict[str, Any]:
        return program_release(self.host(key), arguments, stamped)

    def content(self, key: str, text: bool) -> Dict[str, Any]:
        why = withheld_name(key)
        if why:
            return {"withheld": why}
        try:
            handle = os.open(self.host(key), _open_flags(follow=False))
        except OSError as error:
            return {"errno": error.errno, "error": error.strerror or str(error)}
        try:
            mode = os.fstat(handle).st_mode
            if not stat.S_ISREG(mode):
                return {"replaced": stat.S_IFMT(mode)}  # replaced since it was looked at
            os.set_blocking(handle, True)
            data = _read_at_most(handle, READ_LIMIT + 1)
        except OSError as error:
            return {"errno": error.errno, "error": error.strerror or str(error)}
        finally:
            os.close(handle)
        if text:
            return text_record(key, data)
        return raw_record(key, data)


def program_identity(path: str) -> str:
    """``dev:inode:size:mtime`` of the program at host ``path``: a program replaced since has another."""
    status = os.stat(path)
    return "%d:%d:%d:%d" % (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def version_arguments(node_path: str) -> Optional[Tuple[str, ...]]:
    """How the program the node calls ``node_path`` says its release (:data:`VERSION_ARGUMENTS`), or None: not one
    that runs kubelet, never run (a site's wrapper script might start kubelet whatever its arguments)."""
    return VERSION_ARGUMENTS.get(program_name(node_path))


def program_name(node_path: str) -> str:
    """The name the node calls the program at ``node_path`` by (its last component, links not followed): what decides
    whether it is run, or read, for its release."""
    return node_path.rstrip("/").rsplit("/", 1)[-1]


def program_release(path: str, arguments: Sequence[str], stamped: bool, seconds: Optional[float] = None) -> Dict[str, Any]:
    """The version record of the program at host ``path``: with ``stamped``, its file's stamped release, else
    :func:`run_version`'s."""
    if stamped:
        try:
            identity = program_identity(path)  # before the read: a program replaced meanwhile has another
        except OSError as error:
            return {"errno": error.errno or errno.EIO, "error": error.strerror or str(error)}
        release = stamped_release(path)
        if release is not None:
            return {"output": release, "rc": 0, "identity": identity, "stamped": True}
    return run_version(path, arguments, seconds)


def run_version(path: str, arguments: Sequence[str], seconds: Optional[float] = None) -> Dict[str, Any]:
    """Run the program at host ``path`` with ``arguments`` to hear its version: no shell, no input, a minimal
    environment, its own session (its process group killed whole after ``seconds``, :data:`VERSION_SECONDS` unless
    a caller's budget has less left), at most :data:`MAX_VERSION_OUTPUT` bytes of its standard output read.

    ``os.posix_spawn`` rather than ``subprocess``: importing subprocess (threading, selectors) costs the node more
    CPU than the rest of the reader's imports. The child gets SIGPIPE and SIGXFSZ at their defaults, as from
    ``subprocess``; the reader's own descriptors are not inheritable (PEP 446), so it inherits only what the reader's
    parent passed down as inheritable besides standard input, output and error. Whatever stops the wait (a guard's
    alarm, an interrupt) stops the program's whole session too."""
    seconds = VERSION_SECONDS if seconds is None else min(seconds, VERSION_SECONDS)
    deadline = time.monotonic() + seconds
    try:
        identity = program_identity(path)
        reading, writing = os.pipe()
    except OSError as error:
        return {"errno": error.errno or errno.EIO, "error": error.strerror or str(error)}
    try:
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, writing, 1),
                   (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
        # The node reader has no AnsibleModule, so no run_command: this is its one program start.
        pid = os.posix_spawn(path, [path] + list(arguments), VERSION_ENVIRONMENT, file_actions=actions, setsid=True,  # pylint: disable=ansible-bad-function
                             setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as error:
        os.close(reading)
        return {"errno": error.errno or errno.EIO, "error": error.strerror or str(error)}
    except NotImplementedError:  # a C library without POSIX_SPAWN_SETSID: not run rather than run unkillable
        os.close(reading)
        return {"errno": errno.ENOSYS, "error": "this node's C library cannot start a program in a session of its own"}
    finally:
        os.close(writing)
    status = None
    try:
        try:
            output, answered = _output_until(reading, deadline)
        finally:
            os.close(reading)  # a program still writing gets SIGPIPE
        status = _exit_status(pid, deadline) if answered else None
    finally:
        if status is None:  # still running, something it started holds its output open, or the wait was stopped
            _stop_session(pid)
    if status is None:
        return {"errno": errno.ETIME, "error": "%s did not answer within %g s" % (" ".join(arguments), seconds)}
    lines = output.decode("utf-8", "replace").strip().splitlines() or [""]
    return {"output": lines[0][:MAX_VERSION_LINE], "rc": status, "identity": identity}


def _output_until(handle: int, deadline: float) -> Tuple[bytes, bool]:
    """``(what was read, whether the writer closed it)``: the pipe read until end of file, :data:`MAX_VERSION_OUTPUT`
    bytes or ``deadline``."""
    chunks: List[bytes] = []
    size = 0
    poller = select.poll()
    poller.register(handle, select.POLLIN)
    while size < MAX_VERSION_OUTPUT:
        left = deadline - time.monotonic()
        if left <= 0 or not poller.poll(left * 1000):
            return b"".join(chunks), False
        chunk = os.read(handle, MAX_VERSION_OUTPUT - size)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), True


def _stop_session(pid: int) -> None:
    """Kill the session child ``pid`` leads, every process in it, and reap the child."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _exit_status(pid, float("inf"))


def _exit_status(pid: int, deadline: float) -> Optional[int]:
    """The exit code of child ``pid`` (a signal's as ``-signal``, as subprocess says it), or None when it has not
    exited by ``deadline``. A reader started with SIGCHLD ignored never sees its child's status (the kernel reaps
    it): 0, as subprocess says then."""
    pause = 0.001
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def under_root(root: str, node_path: str, follow: bool = True) -> str:
    """The host path of ``node_path``, confined under ``root``, symbolic links resolved as on the node (what the
    write path writes to: the checkpoint, backups, the collection's own state)."""
    return HostFiles(root).host_path(node_path, follow)


# --------------------------------------------------------------------------- host paths (the write path's reads)


def open_regular_file(path: str, follow: bool = False) -> Any:
    """A read-only descriptor of the regular file at host ``path`` (a context manager; never blocks)."""
    import contextlib  # pylint: disable=import-outside-toplevel

    @contextlib.contextmanager
    def opened() -> Any:
        try:
            handle = os.open(path, _open_flags(follow))
        except FileNotFoundError:
            raise
        except OSError:
            if not follow:
                _raise_if_not_regular(path)  # ELOOP for a symlink, ENXIO for a socket, ...
            raise
        try:
            mode = os.fstat(handle).st_mode
            if not stat.S_ISREG(mode):
                raise NotRegularFileError(path, kind_of(mode))
            os.set_blocking(handle, True)
            yield handle
        finally:
            os.close(handle)

    return opened()


def _raise_if_not_regular(path: str) -> None:
    found = _lstat_record(path)
    if found["kind"] == "link":
        dangling = "" if os.path.exists(path) else "dangling "
        raise NotRegularFileError(path, "a %ssymbolic link (to %s; not followed)" % (dangling, found["target"])) from None
    if found["kind"] in ("dir", "other"):
        raise NotRegularFileError(path, "a directory" if found["kind"] == "dir" else kind_of(found["type"])) from None


def read_regular_file(path: str, limit: int, truncate: bool = False, follow: bool = False) -> bytes:
    """The bytes of the regular file at host ``path``, at most ``limit`` of them: the write path's reader (the
    history, the backups, the re-read of what it wrote, ``/proc``); errors as :meth:`NodeFiles.read_bytes`."""
    with open_regular_file(path, follow) as handle:
        data = _read_at_most(handle, limit if truncate else limit + 1)
    if len(data) > limit:
        raise FileTooLargeError(path, limit)
    return data


# --------------------------------------------------------------------------- the engine's two common reads


def list_dir(files: NodeFiles, node_path: str, shown: str) -> Tuple[Optional[List[str]], Optional[str]]:
    """Sorted entry names of a node directory: ``(None, None)`` when nothing is there, ``(None, problem)`` when it
    is not a directory or cannot be listed; ``shown`` names it in the problem (the node path, or what kubelet
    calls it)."""
    try:
        return files.listdir(node_path), None
    except FileNotFoundError:
        return None, None
    except NotADirectoryError:
        return None, "%s is not a directory" % shown
    except OSError as error:
        return None, "cannot list %s: %s" % (shown, error.strerror or error)


def read_node_text(files: NodeFiles, node_path: str, limit: int = MAX_TEXT_BYTES) -> Tuple[Optional[str], Optional[str], bool]:
    """``(text, problem, exists)`` of a file kubelet or systemd reads (:meth:`NodeFiles.read_text`); never raises.

    ``problem`` names the node path: missing, withheld, not a regular file, too large, not text or not UTF-8.
    """
    try:
        return files.read_text(node_path, limit), None, True
    except FileNotFoundError:
        return None, "%s does not exist" % node_path, False
    except WithheldError as error:
        return None, "%s is not read: %s" % (node_path, error.why), True
    except NotRegularFileError:
        return None, "%s is not a regular file" % node_path, True
    except FileTooLargeError:
        return None, "%s is larger than %d bytes" % (node_path, limit), True
    except OSError as error:
        return None, "cannot read %s: %s" % (node_path, error.strerror or error), True
    except NotTextError as error:
        return None, "%s %s" % (node_path, error.why), True
