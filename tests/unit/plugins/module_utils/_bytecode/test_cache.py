# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node-side bytecode cache: entries, trust checks, and imports from an AnsiballZ-shaped zip."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import zipfile

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._bytecode import cache as _bytecode

ENGINE = os.path.dirname(os.path.dirname(_bytecode.__file__))  # plugins/module_utils
PACKAGE_DIR = "ansible_collections/nodeops/numa_drift/plugins/module_utils"
SAMPLE = '''
"""A sample engine file."""
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _helper

VALUE = _helper.twice(21)


def fail():
    raise ValueError("sample failure")
'''
HELPER = "def twice(value):\n    return 2 * value\n"

# Runs in a clean interpreter, as AnsiballZ does: the zip first on sys.path, the cache installed,
# then the engine imported. Prints what was imported, from where, and what zipimport compiled.
PROBE = r'''
import json, os, sys, traceback, zipimport
zip_path = sys.argv[1]
sys.path.insert(0, zip_path)
compiled = []
original = zipimport._compile_source
def counting(pathname, source):
    compiled.append(pathname.split(".zip/", 1)[1])
    return original(pathname, source)
zipimport._compile_source = counting
from ansible_collections.nodeops.numa_drift.plugins.module_utils._bytecode import cache as _bytecode
directory = None if os.environ.get("BYTECODE_TEST_NO_INSTALL") else _bytecode.install()
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _sample
try:
    _sample.fail()
except ValueError:
    frames = traceback.extract_tb(sys.exc_info()[2])
print(json.dumps({"directory": directory, "value": _sample.VALUE, "file": _sample.__file__,
                  "loader": type(_sample.__loader__).__name__, "compiled": compiled,
                  "traceback_file": frames[-1].filename, "traceback_line": frames[-1].lineno}))
'''


def build_zip(path, sample=SAMPLE, extra=None):
    """The shape AnsiballZ sends: package __init__ files and the engine's files under the collection path."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        parts = PACKAGE_DIR.split("/")
        for depth in range(1, len(parts) + 1):
            archive.writestr("/".join(parts[:depth]) + "/__init__.py", "")
        archive.writestr(PACKAGE_DIR + "/_bytecode/__init__.py", "")
        with open(os.path.join(ENGINE, "_bytecode", "cache.py"), "rb") as handle:
            archive.writestr(PACKAGE_DIR + "/_bytecode/cache.py", handle.read())
        archive.writestr(PACKAGE_DIR + "/_sample.py", sample)
        archive.writestr(PACKAGE_DIR + "/_helper.py", HELPER)
        for name, text in (extra or {}).items():
            archive.writestr(PACKAGE_DIR + "/" + name, text)
    return str(path)


def run_probe(zip_path, cache, env_extra=None):
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env[_bytecode.ENVIRONMENT_VARIABLE] = str(cache)
    env.update(env_extra or {})
    completed = subprocess.run([sys.executable, "-c", PROBE, zip_path], env=env, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(completed.stdout)


def entries(cache):
    directory = os.path.join(str(cache), sys.implementation.cache_tag)
    return sorted(os.listdir(directory)) if os.path.isdir(directory) else []


def test_cache_directory_follows_the_variable_then_root_then_home() -> None:
    tag = sys.implementation.cache_tag
    assert _bytecode.cache_directory({}, 0, None) == os.path.join("/var/cache/nodeops-numa-drift/bytecode", tag)
    assert _bytecode.cache_directory({}, 1000, "/home/ops") == os.path.join("/home/ops/.cache/nodeops-numa-drift/bytecode", tag)
    assert _bytecode.cache_directory({}, 1000, None) is None
    assert _bytecode.cache_directory({_bytecode.ENVIRONMENT_VARIABLE: "/srv/cache"}, 0, None) == os.path.join("/srv/cache", tag)
    for off in ("off", "OFF", "false", "no", "0"):
        assert _bytecode.cache_directory({_bytecode.ENVIRONMENT_VARIABLE: off}, 0, "/root") is None


def test_entries_are_named_by_module_and_source_digest() -> None:
    digest = _bytecode.source_digest(b"x = 1\n")
    first = _bytecode.entry_name(_bytecode.PACKAGE + "_policy.drift", digest)
    assert first == "module_utils._policy.drift.%s.code" % digest
    assert _bytecode.entry_name(_bytecode.PACKAGE + "sub._deep", digest) == "module_utils.sub._deep.%s.code" % digest
    assert digest != _bytecode.source_digest(b"x = 2\n")
    assert _bytecode.entry_name("other.pkg._drift", digest) == "other.pkg._drift.%s.code" % digest


def test_pack_round_trips_and_refuses_torn_foreign_or_altered_blobs() -> None:
    code = compile("x = 40 + 2\n", "<test>", "exec")
    blob = _bytecode.pack(code)
    namespace = {}
    exec(_bytecode.unpack(blob), namespace)  # pylint: disable=exec-used
    assert namespace["x"] == 42
    assert _bytecode.unpack(blob[:-1]) is None
    assert _bytecode.unpack(b"\0\0\0\0" + blob[4:]) is None
    altered = bytearray(blob)
    altered[-2] ^= 0xFF
    assert _bytecode.unpack(bytes(altered)) is None
    assert _bytecode.unpack(b"") is None
    # A blob whose digest matches but which is not marshalled code is refused too.
    data = b"not marshal data"
    import hashlib  # pylint: disable=import-outside-toplevel
    assert _bytecode.unpack(_bytecode.importlib.util.MAGIC_NUMBER + hashlib.sha256(data).digest() + data) is None


def test_first_import_compiles_once_and_fills_the_cache_privately(tmp_path) -> None:
    zip_path = build_zip(tmp_path / "payload.zip")
    result = run_probe(zip_path, tmp_path / "cache")
    assert result["value"] == 42 and result["loader"] == "_CachedLoader"
    assert result["directory"] == os.path.join(str(tmp_path / "cache"), sys.implementation.cache_tag)
    # zipimport compiled only the cache itself and the empty package files: not the engine files.
    assert PACKAGE_DIR + "/_sample.py" not in result["compiled"]
    assert PACKAGE_DIR + "/_helper.py" not in result["compiled"]
    names = entries(tmp_path / "cache")
    assert [name.split(".")[1] for name in names] == ["_helper", "_sample"]
    directory = result["directory"]
    assert stat.S_IMODE(os.lstat(directory).st_mode) == 0o700
    for name in names:
        assert stat.S_IMODE(os.lstat(os.path.join(directory, name)).st_mode) == 0o600


def test_second_run_executes_the_cached_code_and_names_this_runs_file(tmp_path) -> None:
    zip_path = build_zip(tmp_path / "first.zip")
    run_probe(zip_path, tmp_path / "cache")
    directory = os.path.join(str(tmp_path / "cache"), sys.implementation.cache_tag)
    name = [entry for entry in entries(tmp_path / "cache") if entry.startswith("module_utils._helper.")][0]
    # Put a different code object under the source's name: the import must run it, so the cache is read.
    with open(os.path.join(directory, name), "wb") as handle:
        handle.write(_bytecode.pack(compile("def twice(value):\n    return 3 * value\n", "old-path", "exec")))
    other_zip = build_zip(tmp_path / "second.zip")
    result = run_probe(other_zip, tmp_path / "cache")
    assert result["value"] == 63
    assert result["file"] == other_zip + "/" + PACKAGE_DIR + "/_sample.py"
    # The cached _sample's traceback names this run's zip, as a .pyc's does.
    assert result["traceback_file"] == other_zip + "/" + PACKAGE_DIR + "/_sample.py"
    assert result["traceback_line"] == 9


@pytest.mark.parametrize("damage", ["torn", "group_writable", "symlink"])
def test_damaged_or_foreign_entries_are_recompiled_not_run(tmp_path, damage) -> None:
    zip_path = build_zip(tmp_path / "payload.zip")
    run_probe(zip_path, tmp_path / "cache")
    directory = os.path.join(str(tmp_path / "cache"), sys.implementation.cache_tag)
    name = [entry for entry in entries(tmp_path / "cache") if entry.startswith("module_utils._helper.")][0]
    path = os.path.join(directory, name)
    foreign = _bytecode.pack(compile("def twice(value):\n    return 5 * value\n", "x", "exec"))
    if damage == "torn":
        with open(path, "wb") as handle:
            handle.write(foreign[:-7])
    elif damage == "group_writable":
        with open(path, "wb") as handle:
            handle.write(foreign)
        os.chmod(path, 0o620)
    else:
        elsewhere = tmp_path / "elsewhere.code"
        elsewhere.write_bytes(foreign)
        os.chmod(str(elsewhere), 0o600)
        os.unlink(path)
        os.symlink(str(elsewhere), path)
    result = run_probe(zip_path, tmp_path / "cache")
    assert result["value"] == 42
    # Rewritten as a private regular file with the real code.
    status = os.lstat(path)
    assert stat.S_ISREG(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o600
    with open(path, "rb") as handle:
        namespace = {}
        exec(_bytecode.unpack(handle.read()), namespace)  # pylint: disable=exec-used
    assert namespace["twice"](21) == 42


def test_a_directory_others_can_write_is_never_used(tmp_path) -> None:
    zip_path = build_zip(tmp_path / "payload.zip")
    cache = tmp_path / "cache"
    directory = cache / sys.implementation.cache_tag
    directory.mkdir(parents=True)
    os.chmod(str(cache), 0o777)
    result = run_probe(zip_path, cache)
    assert result["value"] == 42
    assert entries(cache) == []


def test_off_and_pythondontwritebytecode_write_nothing_and_still_compile_once(tmp_path) -> None:
    zip_path = build_zip(tmp_path / "payload.zip")
    result = run_probe(zip_path, "off")
    # Cache off: the finder still builds the spec (no compile by zipimport's find_spec), the loader compiles once.
    assert result["directory"] is None and result["value"] == 42 and result["loader"] == "_CachedLoader"
    assert PACKAGE_DIR + "/_sample.py" not in result["compiled"] and PACKAGE_DIR + "/_helper.py" not in result["compiled"]
    result = run_probe(zip_path, tmp_path / "cache", {"PYTHONDONTWRITEBYTECODE": "1"})
    assert result["value"] == 42
    assert not os.path.exists(str(tmp_path / "cache"))


def test_a_new_source_replaces_the_modules_old_entry(tmp_path) -> None:
    run_probe(build_zip(tmp_path / "one.zip"), tmp_path / "cache")
    before = entries(tmp_path / "cache")
    result = run_probe(build_zip(tmp_path / "two.zip", SAMPLE.replace("twice(21)", "twice(4)")), tmp_path / "cache")
    after = entries(tmp_path / "cache")
    assert result["value"] == 8
    helper = "module_utils._helper."
    assert len(after) == 2 and [name for name in after if name.startswith(helper)] == [name for name in before if name.startswith(helper)]
    assert set(after) != set(before)


def test_files_outside_a_zip_are_left_to_the_import_system(tmp_path) -> None:
    finder = _bytecode._Finder(_bytecode._Cache(str(tmp_path / "cache"), os.geteuid()))  # pylint: disable=protected-access
    assert finder.find_spec("ansible_collections.nodeops.numa_drift.plugins.module_utils._policy.drift", [os.path.join(ENGINE, "_policy")]) is None
    assert finder.find_spec("json", None) is None
    assert not os.path.exists(str(tmp_path / "cache"))


def test_marshal_of_the_real_engine_is_what_the_cache_stores(tmp_path) -> None:
    """Every engine file the probe ships survives pack/unpack (the cache holds nothing marshal cannot)."""
    names = sorted(os.path.join(top, name) for top, _dirs, files in os.walk(ENGINE) for name in files if name.endswith(".py"))
    assert os.path.join(ENGINE, "_policy", "drift.py") in names  # subpackages included
    for name in names:
        with open(name, "rb") as handle:
            code = compile(handle.read(), name, "exec", dont_inherit=True)
        assert _bytecode.unpack(_bytecode.pack(code)) == code, name


def _cache_dir(base, *parts):
    directory = os.path.join(str(base), *parts)
    os.makedirs(directory, mode=0o700)
    return directory


def test_trust_walks_every_ancestor_not_only_the_parent(tmp_path) -> None:
    euid = os.geteuid()
    directory = _cache_dir(tmp_path, "a", "b", "cache", "tag")
    assert _bytecode.trusted_directory(directory, euid)
    os.chmod(str(tmp_path / "a"), 0o777)  # two levels above the cache's parent
    assert not _bytecode.trusted_directory(directory, euid)
    os.chmod(str(tmp_path / "a"), 0o775)
    assert not _bytecode.trusted_directory(directory, euid)
    os.chmod(str(tmp_path / "a"), 0o755)
    assert _bytecode.trusted_directory(directory, euid)


def test_trust_refuses_a_symlinked_ancestor(tmp_path) -> None:
    euid = os.geteuid()
    real = _cache_dir(tmp_path, "real", "cache", "tag")
    os.symlink(str(tmp_path / "real"), str(tmp_path / "link"))
    assert _bytecode.trusted_directory(real, euid)
    assert not _bytecode.trusted_directory(str(tmp_path / "link" / "cache" / "tag"), euid)
    zip_path = build_zip(tmp_path / "payload.zip")
    result = run_probe(zip_path, tmp_path / "link" / "cache")
    assert result["value"] == 42
    assert entries(tmp_path / "real" / "cache") == []


@pytest.mark.skipif(os.geteuid() != 0, reason="changing an owner needs root")
def test_trust_refuses_a_foreign_ancestor_and_allows_roots_sticky_directories(tmp_path) -> None:
    directory = _cache_dir(tmp_path, "shared", "cache", "tag")
    os.chown(str(tmp_path / "shared"), 4321, 0)
    assert not _bytecode.trusted_directory(directory, 0)
    os.chown(str(tmp_path / "shared"), 0, 0)
    os.chmod(str(tmp_path / "shared"), 0o1777)  # like /tmp: others cannot rename what is ours
    assert _bytecode.trusted_directory(directory, 0)
    os.chown(str(tmp_path / "shared"), 4321, 0)  # sticky but someone else's: they can rename it
    assert not _bytecode.trusted_directory(directory, 0)


def test_without_the_finder_zipimport_compiles_each_file_twice(tmp_path) -> None:
    """What the finder saves, cache or not: zipimport's find_spec compiles a file to learn its name, then loads it."""
    zip_path = build_zip(tmp_path / "payload.zip")
    plain = run_probe(zip_path, "off", {"BYTECODE_TEST_NO_INSTALL": "1"})
    assert plain["value"] == 42 and plain["loader"] == "zipimporter" and plain["directory"] is None
    assert plain["compiled"].count(PACKAGE_DIR + "/_sample.py") == 2 and plain["compiled"].count(PACKAGE_DIR + "/_helper.py") == 2


def test_subpackages_of_module_utils_are_cached_too(tmp_path) -> None:
    """No flat-layout assumption: a module in a subpackage of module_utils is found, cached and run from the cache."""
    sample = SAMPLE.replace("import _helper", "import _helper\nfrom ansible_collections.nodeops.numa_drift.plugins.module_utils.sub import _deep")
    sample = sample.replace("VALUE = _helper.twice(21)", "VALUE = _helper.twice(21) + _deep.ONE")
    zip_path = build_zip(tmp_path / "payload.zip", sample, {"sub/__init__.py": "", "sub/_deep.py": "ONE = 1\n"})
    first = run_probe(zip_path, tmp_path / "cache")
    assert first["value"] == 43 and PACKAGE_DIR + "/sub/_deep.py" not in first["compiled"]
    cached = [name.rsplit(".", 2)[0] for name in entries(tmp_path / "cache")]
    assert cached == ["module_utils._helper", "module_utils._sample", "module_utils.sub._deep"]
    assert run_probe(zip_path, tmp_path / "cache")["value"] == 43
