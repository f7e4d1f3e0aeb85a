# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A node-side cache of this collection's compiled engine, so a node compiles it once, not every run.

AnsiballZ runs a module from a zip on ``sys.path``; zipimport neither reads nor writes ``.pyc``
files for a source-only archive, so every run compiles every imported file again, and its
``find_spec`` compiles each file once more only to learn its name. For the probe that compile is
most of its cost over Ansible's floor (docs/fleet-scale.md). :func:`install` puts a finder
before the path finder for this collection's ``module_utils`` only (subpackages included), and
only when they come from a zip: each file is compiled at most once per run, and its code object
is kept under

    /var/cache/nodeops-numa-drift/bytecode/<cache tag>/     (root; others: ~/.cache/...)

named by the module and the SHA-256 of its source, so a new collection version simply misses.
Python's own rules for ``__pycache__`` are the model: the code is trusted because only the
user that runs the module can write the directory; here that is checked for the directory and every
ancestor (see :func:`trusted_directory`), and each entry carries the SHA-256 of its
marshalled code, so a torn or foreign file is recompiled instead of run.

The cache never changes what a module does: any problem with it (no space, read-only file
system, a directory owned by someone else) means compiling as without it, once per file. The
environment variable ``NODEOPS_NUMA_DRIFT_BYTECODE_CACHE`` names another directory, or ``off``
(then nothing is read or written, and each file is still compiled only once).
Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import _imp
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import stat
import sys
import tempfile
import zipimport
from typing import Any, Mapping, Optional, Tuple

__all__ = ["ENVIRONMENT_VARIABLE", "SYSTEM_DIRECTORY", "cache_directory", "install", "source_digest"]

ENVIRONMENT_VARIABLE = "NODEOPS_NUMA_DRIFT_BYTECODE_CACHE"
SYSTEM_DIRECTORY = "/var/cache/nodeops-numa-drift/bytecode"
COLLECTION = "ansible_collections.nodeops.numa_drift.plugins."
PACKAGE = COLLECTION + "module_utils."
OFF = ("off", "false", "no", "0")
ENTRY_SUFFIX = ".code"
MAX_ENTRY_BYTES = 8 * 1024 * 1024
_DIGEST_BYTES = 32


def cache_directory(environ: Mapping[str, str], euid: int, home: Optional[str]) -> Optional[str]:
    """The directory for this interpreter's entries, or None when the cache is off."""
    chosen = environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if chosen.lower() in OFF:
        return None
    if not chosen:
        if euid == 0:
            chosen = SYSTEM_DIRECTORY
        elif home:
            chosen = os.path.join(home, ".cache", "nodeops-numa-drift", "bytecode")
        else:
            return None
    tag = sys.implementation.cache_tag
    return os.path.join(chosen, tag) if tag else None


def source_digest(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def short_name(module_name: str) -> str:
    """``module_utils._policy.drift`` for this collection's files (the directory is per interpreter already)."""
    return module_name[len(COLLECTION):] if module_name.startswith(COLLECTION) else module_name


def entry_name(module_name: str, digest: str) -> str:
    """``<short module name>.<SHA-256 of its source>.code``: the controller can name it without the source."""
    return "%s.%s%s" % (short_name(module_name), digest, ENTRY_SUFFIX)


def pack(code: Any) -> bytes:
    """The interpreter's magic number, the SHA-256 of the marshalled code, the marshalled code."""
    data = marshal.dumps(code)
    return importlib.util.MAGIC_NUMBER + hashlib.sha256(data).digest() + data


def unpack(blob: bytes) -> Optional[Any]:
    """The code object of a :func:`pack` result, or None when it is not one for this interpreter."""
    magic = importlib.util.MAGIC_NUMBER
    header = len(magic) + _DIGEST_BYTES
    if len(blob) <= header or blob[:len(magic)] != magic:
        return None
    data = blob[header:]
    if hashlib.sha256(data).digest() != blob[len(magic):header]:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None


def _others_may_write(mode: int) -> bool:
    return bool(mode & (stat.S_IWGRP | stat.S_IWOTH))


def _private(mode: int, uid: int, euid: int) -> bool:
    return uid == euid and not _others_may_write(mode)


def _safe_ancestor(status: os.stat_result, euid: int) -> bool:
    """No one but ``euid`` and root can replace what an ancestor holds: a real directory owned by
    one of them, not writable by group or others, unless it is root's and sticky (``/tmp``:
    others may add entries there but not rename or remove ours)."""
    if not stat.S_ISDIR(status.st_mode) or status.st_uid not in (euid, 0):
        return False
    sticky_root = status.st_uid == 0 and bool(status.st_mode & stat.S_ISVTX)
    return sticky_root or not _others_may_write(status.st_mode)


def trusted_directory(directory: str, euid: int) -> bool:
    """Only ``euid`` (and root) can change what ``directory`` holds, through any of its ancestors.

    Python trusts a ``__pycache__`` because whoever could write it could write the source next to
    it; code read from here has no source beside it, so the whole path is checked as OpenSSH's
    ``StrictModes`` checks a key's (``safe_path``): the directory is a real directory of ``euid``
    that group and others cannot write, and every ancestor up to ``/`` is a real directory (no
    symbolic link anywhere in the path) owned by ``euid`` or root that group and others cannot
    write, a root-owned sticky directory such as ``/tmp`` excepted. Anything else: no cache.
    """
    path = os.path.abspath(directory)
    try:
        leaf = os.lstat(path)
        if not (stat.S_ISDIR(leaf.st_mode) and _private(leaf.st_mode, leaf.st_uid, euid)):
            return False
        while path != os.path.dirname(path):
            path = os.path.dirname(path)
            if not _safe_ancestor(os.lstat(path), euid):
                return False
    except OSError:
        return False
    return True


def read_entry(directory: str, name: str, euid: int) -> Optional[Any]:
    """The cached code of ``name``, or None (missing, not private, too large, torn or foreign)."""
    try:
        descriptor = os.open(os.path.join(directory, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode) or not _private(status.st_mode, status.st_uid, euid):
            return None
        if status.st_size > MAX_ENTRY_BYTES:
            return None
        return unpack(handle.read(MAX_ENTRY_BYTES + 1))


def write_entry(directory: str, module_name: str, digest: str, code: Any) -> None:
    """Store ``code`` as the module's entry (temp file and rename) and drop its older entries."""
    name = entry_name(module_name, digest)
    handle, temp_path = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(pack(code))
        os.rename(temp_path, os.path.join(directory, name))
    except BaseException:
        os.unlink(temp_path)
        raise
    module_prefix = short_name(module_name) + "."
    for other in os.listdir(directory):
        if other != name and other.startswith(module_prefix) and other.endswith(ENTRY_SUFFIX):
            try:
                os.unlink(os.path.join(directory, other))
            except OSError:
                pass


class _Cache:
    """One directory of entries, created on the first write and checked once per process."""

    def __init__(self, directory: str, euid: int) -> None:
        self.directory = directory
        self.euid = euid
        self._usable: Optional[bool] = None

    def usable(self, create: bool) -> bool:
        if self._usable is None or (create and not self._usable):
            if create and not os.path.isdir(self.directory):
                try:
                    os.makedirs(self.directory, mode=0o700)
                except OSError:
                    pass
            self._usable = trusted_directory(self.directory, self.euid)
        return self._usable

    def cached(self, module_name: str, digest: str, origin: str) -> Optional[Any]:
        code = read_entry(self.directory, entry_name(module_name, digest), self.euid) if self.usable(create=False) else None
        if code is not None:
            _imp._fix_co_filename(code, origin)  # as importlib does for a .pyc: tracebacks name this run's file
        return code

    def writable(self) -> bool:
        return not sys.dont_write_bytecode and self.usable(create=True)

    def code(self, module_name: str, source: bytes, origin: str) -> Any:
        digest = source_digest(source)
        code = self.cached(module_name, digest, origin)
        if code is None:
            code = compile(source, origin, "exec", dont_inherit=True)
            self.store(module_name, digest, code)
        return code

    def store(self, module_name: str, digest: str, code: Any) -> None:
        if self.writable():
            try:
                write_entry(self.directory, module_name, digest, code)
            except OSError:
                pass


class _CodeLoader:
    """Runs a code object read from the cache (no source on this side)."""

    def __init__(self, code: Any) -> None:
        self._code = code

    def create_module(self, spec: Any) -> None:  # pylint: disable=unused-argument
        return None

    def exec_module(self, module: Any) -> None:
        exec(self.get_code(module.__name__), module.__dict__)  # pylint: disable=exec-used

    def get_code(self, fullname: str) -> Any:  # pylint: disable=unused-argument
        return self._code

    def is_package(self, fullname: str) -> bool:  # pylint: disable=unused-argument
        return False


class _CachedLoader(_CodeLoader):
    """Runs one source file of the zip, with its code object taken from the cache (compiled and kept on a miss);
    without a cache (``off``), compiled once."""

    def __init__(self, source: bytes, origin: str, cache: Optional[_Cache]) -> None:
        super().__init__(None)
        self._source = source
        self._origin = origin
        self._cache = cache

    def get_code(self, fullname: str) -> Any:
        if self._cache is None:
            return compile(self._source, self._origin, "exec", dont_inherit=True)
        return self._cache.code(fullname, self._source, self._origin)

    def get_source(self, fullname: str) -> str:  # pylint: disable=unused-argument
        return importlib.util.decode_source(self._source)


def _spec(fullname: str, loader: Any, origin: str) -> Any:
    """A spec with a file location (``__file__`` set), as the path finder's."""
    spec = importlib.machinery.ModuleSpec(fullname, loader, origin=origin)
    spec.has_location = True
    return spec


def zipped_source(fullname: str, path: Any) -> Optional[Tuple[str, bytes]]:
    """(origin, source) of module ``fullname`` when its package directory is inside a zip already imported from."""
    leaf = fullname.rsplit(".", 1)[-1] + ".py"
    for entry in path or ():
        importer = sys.path_importer_cache.get(entry)
        if importer is None and ".zip" in entry:
            try:
                importer = zipimport.zipimporter(entry)
            except (zipimport.ZipImportError, OSError):
                continue
        if not isinstance(importer, zipimport.zipimporter):
            continue
        origin = entry + "/" + leaf
        try:
            return origin, importer.get_data(origin)
        except OSError:
            continue
    return None


class _Finder:
    """Finds this collection's module_utils in the AnsiballZ zip and gives them the cached loader.

    It builds the spec itself: zipimport's own ``find_spec`` asks its ``get_filename``, which
    compiles the source only to learn the file name, so every zipped module is compiled twice
    (CPython 3.9 to 3.13). Packages and anything not in a zip are left to the import system.
    ``cache`` None (the cache off): each file is compiled once, nothing is read or written.
    """

    def __init__(self, cache: Optional[_Cache]) -> None:
        self.cache = cache

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:  # pylint: disable=unused-argument
        if not fullname.startswith(PACKAGE):
            return None
        found = zipped_source(fullname, path)
        if found is None:
            return None
        origin, source = found
        return _spec(fullname, _CachedLoader(source, origin, self.cache), origin)

    def invalidate_caches(self) -> None:
        """Nothing to forget: entries are named by their source."""


def _home(euid: int) -> Optional[str]:
    try:
        import pwd  # pylint: disable=import-outside-toplevel
        return pwd.getpwuid(euid).pw_dir
    except (ImportError, KeyError):
        return None


def _insert_finder(finder: Any) -> None:
    """Just before the path finder (zipimport's way in): built-in and frozen modules are never ours."""
    for index, existing in enumerate(sys.meta_path):
        if existing is importlib.machinery.PathFinder:
            sys.meta_path.insert(index, finder)
            return
    sys.meta_path.append(finder)


def _cache(environ: Optional[Mapping[str, str]]) -> Optional[_Cache]:
    euid = os.geteuid()
    directory = cache_directory(os.environ if environ is None else environ, euid, _home(euid) if euid else None)
    return None if directory is None else _Cache(directory, euid)


def install(environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Put the finder on ``sys.meta_path`` (once); the cache directory, or None when the cache is off.

    With the cache off the finder is installed all the same: each engine file is then compiled once.
    """
    for finder in sys.meta_path:
        if isinstance(finder, _Finder):
            return finder.cache.directory if finder.cache else None
    cache = _cache(environ)
    _insert_finder(_Finder(cache))
    return cache.directory if cache else None
