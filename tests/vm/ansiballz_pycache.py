# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The test guests keep the compiled code of Ansible's own ``module_utils`` between module runs.

Installed into the guest image only (tests/vm/build-image.sh puts this file into the guest's
``/usr/local/lib/python3*/dist-packages`` with a ``.pth`` line that calls :func:`install`); never
shipped in the collection, never on a real node.

Why: an AnsiballZ payload is a zip on ``sys.path``, and zipimport neither reads nor writes ``.pyc``
files, so every module run compiles ``ansible.module_utils.basic`` and everything it imports. Under
QEMU's TCG that is 2-3 s of CPU per task, about half of each module run in a guest, and the molecule
scenarios run a few hundred of them. This finder sits in front of the import system for the modules
named ``ansible`` and ``ansible.*`` found inside a zip, and takes each one's code object from
``CACHE_DIR/<name>.<SHA-256 of the source>.code``, or compiles it once and stores it there.

Only Ansible's own files: ``ansible_collections.*`` (the collection under test) is left to zipimport, exactly as
on a node. Anything unexpected (a
damaged entry, a full disk, a read-only ``/var``) falls back to compiling from the source, so a
module never fails because of this file. Tracebacks and ``__file__`` name the zip path, as zipimport's.
"""

from __future__ import annotations

# Only what every interpreter has loaded already: the .pth line runs this at each Python start in the
# guest, and the rest (zipfile, hashlib, marshal) is imported when an ``ansible`` name is looked up.
import os
import sys

CACHE_DIR = "/var/cache/nd-ansiballz-pycache"
PREFIX = "ansible"


def split_zip_path(entry):
    """``/x/p.zip/ansible/module_utils`` -> (``/x/p.zip``, ``ansible/module_utils/``); None outside a zip."""
    import zipfile  # pylint: disable=import-outside-toplevel

    archive = entry
    while archive and archive != os.path.dirname(archive):
        if os.path.isfile(archive):
            if not zipfile.is_zipfile(archive):
                return None
            inner = entry[len(archive):].strip("/")
            return archive, inner + "/" if inner else ""
        archive = os.path.dirname(archive)
    return None


def is_ours(fullname):
    return fullname == PREFIX or fullname.startswith(PREFIX + ".")


class CachedZipLoader:
    """Loads one module of a zip: code from the cache when its source is unchanged, data through zipimport."""

    def __init__(self, archive, opened, member, cache_dir):
        import zipimport  # pylint: disable=import-outside-toplevel

        self.archive = archive
        self.opened = opened  # the finder's open ZipFile of archive
        self.member = member
        self.cache_dir = cache_dir
        self.filename = os.path.join(archive, member)
        # get_data, get_resource_reader and friends as zipimport gives them
        self._zip = zipimport.zipimporter(os.path.join(archive, os.path.dirname(member)))
        self.outcome = ""  # "hit", "stored" or "compiled" once loaded: what the tests check

    def get_filename(self, fullname):
        return self.filename

    def is_package(self, fullname):
        return self.member.endswith("/__init__.py")

    def get_source(self, fullname):
        return self._source().decode("utf-8")

    def get_data(self, path):
        return self._zip.get_data(path)

    def get_resource_reader(self, fullname):
        return self._zip.get_resource_reader(fullname)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.get_code(module.__name__), module.__dict__)  # pylint: disable=exec-used

    def get_code(self, fullname):
        import hashlib  # pylint: disable=import-outside-toplevel

        source = self._source()
        entry = os.path.join(self.cache_dir, "%s.%s.code" % (fullname, hashlib.sha256(source).hexdigest()))
        code = self._read_entry(entry)
        if code is not None:
            self.outcome = "hit"
            return code
        code = compile(source, self.filename, "exec", dont_inherit=True)
        self.outcome = "stored" if self._write_entry(entry, code) else "compiled"
        return code

    def _source(self):
        return self.opened.read(self.member)

    @staticmethod
    def _read_entry(entry):
        import importlib.util  # pylint: disable=import-outside-toplevel
        import marshal  # pylint: disable=import-outside-toplevel

        try:
            with open(entry, "rb") as handle:
                magic = handle.read(len(importlib.util.MAGIC_NUMBER))
                if magic != importlib.util.MAGIC_NUMBER:
                    return None
                return marshal.loads(handle.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None

    @staticmethod
    def _write_entry(entry, code):
        import importlib.util  # pylint: disable=import-outside-toplevel
        import marshal  # pylint: disable=import-outside-toplevel

        partial = "%s.%d.partial" % (entry, os.getpid())
        try:
            os.makedirs(os.path.dirname(entry), mode=0o700, exist_ok=True)
            with open(partial, "wb") as handle:
                handle.write(importlib.util.MAGIC_NUMBER + marshal.dumps(code))
            os.replace(partial, entry)
            return True
        except OSError:
            try:
                os.unlink(partial)
            except OSError:
                pass
            return False


class AnsiballzCodeCache:
    """Finds ``ansible`` and ``ansible.*`` inside zips on the import path; leaves everything else alone."""

    def __init__(self, cache_dir=CACHE_DIR):
        self.cache_dir = cache_dir
        self._archives = {}
        self._located = {}

    def find_spec(self, fullname, path=None, target=None):
        if not is_ours(fullname):
            return None
        import importlib.util  # pylint: disable=import-outside-toplevel

        leaf = fullname.rpartition(".")[2]
        for entry in (sys.path if path is None else path):
            if not isinstance(entry, str):
                continue
            if entry not in self._located:
                self._located[entry] = split_zip_path(entry)
            located = self._located[entry]
            if located is None:
                continue
            archive, inner = located
            opened, members = self._open(archive)
            for member, package in ((inner + leaf + "/__init__.py", True), (inner + leaf + ".py", False)):
                if member in members:
                    loader = CachedZipLoader(archive, opened, member, self.cache_dir)
                    spec = importlib.util.spec_from_file_location(
                        fullname, loader.filename, loader=loader,
                        submodule_search_locations=[os.path.join(archive, inner + leaf)] if package else None)
                    return spec
        return None

    def _open(self, archive):
        """The archive opened once for every module found in it, and its member names ((None, empty) when unreadable)."""
        import zipfile  # pylint: disable=import-outside-toplevel

        if archive not in self._archives:
            try:
                opened = zipfile.ZipFile(archive)  # pylint: disable=consider-using-with
                self._archives[archive] = opened, frozenset(opened.namelist())
            except (OSError, zipfile.BadZipFile):
                self._archives[archive] = None, frozenset()
        return self._archives[archive]


def install(cache_dir=CACHE_DIR):
    """Put the finder in front of the import system, once (the guest's .pth line calls this)."""
    if not any(isinstance(finder, AnsiballzCodeCache) for finder in sys.meta_path):
        sys.meta_path.insert(0, AnsiballzCodeCache(cache_dir))
