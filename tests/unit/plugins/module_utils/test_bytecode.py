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

from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode

ENGINE = os.path.join(os.path.dirname(_bytecode.__file__))
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
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode
directory = _bytecode.install()
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _sample
try:
    _sample.fail()
except ValueError:
    frames = traceback.extract_tb(sys.exc_info()[2])
print(json.dumps({"directory": directory, "value": _sample.VALUE, "file": _sample.__file__,
                  "loader": type(_sample.__loader__).__name__, "compiled": compiled,
                  "traceback_file": frames[-1].filename, "traceback_line": frames[-1].lineno}))
'''


def build_zip(path, sample=SAMPLE):
    """The shape AnsiballZ sends: package __init__ files and the engine's files under the collection path."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        parts = PACKAGE_DIR.split("/")
        for depth in range(1, len(parts) + 1):
            archive.writestr("/".join(parts[:depth]) + "/__init__.py", "")
        with open(os.path.join(ENGINE, "_bytecode.py"), "rb") as handle:
            archive.writestr(PACKAGE_DIR + "/_bytecode.py", handle.read())
        archive.writestr(PACKAGE_DIR + "/_sample.py", sample)
        archive.writestr(PACKAGE_DIR + "/_helper.py", HELPER)
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
    first = _bytecode.entry_name(_bytecode.PACKAGE + "_drift", digest)
    assert first == "module_utils._drift.%s.code" % digest
    assert _bytecode.entry_name(_bytecode.MODULES + "numa_drift_facts", digest) == "modules.numa_drift_facts.%s.code" % digest
    assert digest != _bytecode.source_digest(b"x = 2\n")
    assert _bytecode.entry_name("other.pkg._drift", digest) == "other.pkg._drift.%s.code" % digest


def test_manifest_round_trips_and_refuses_malformed_text() -> None:
    digest = "ab" * 32
    entries = [(_bytecode.MODULES + "numa_drift_facts", digest), (_bytecode.PACKAGE + "_drift", "cd" * 32)]
    text = _bytecode.format_manifest(entries)
    assert text == "modules.numa_drift_facts=%s,module_utils._drift=%s" % (digest, "cd" * 32)
    assert _bytecode.parse_manifest(text) == entries
    for bad in ("", "modules.x=abc", "modules.x=" + "g" * 64, "module_utils._drift=" + digest, "modules.x",
                "modules.x=%s,=%s" % (digest, digest)):
        with pytest.raises(ValueError):
            _bytecode.parse_manifest(bad)


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


def test_off_and_pythondontwritebytecode_write_nothing(tmp_path) -> None:
    zip_path = build_zip(tmp_path / "payload.zip")
    result = run_probe(zip_path, "off")
    assert result["directory"] is None and result["value"] == 42 and result["loader"] != "_CachedLoader"
    assert PACKAGE_DIR + "/_sample.py" in result["compiled"]
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
    assert finder.find_spec("ansible_collections.nodeops.numa_drift.plugins.module_utils._drift", [ENGINE]) is None
    assert finder.find_spec("json", None) is None
    assert not os.path.exists(str(tmp_path / "cache"))


def test_marshal_of_the_real_engine_is_what_the_cache_stores(tmp_path) -> None:
    """Every engine file the probe ships survives pack/unpack (the cache holds nothing marshal cannot)."""
    for name in sorted(os.listdir(ENGINE)):
        if name.endswith(".py"):
            with open(os.path.join(ENGINE, name), "rb") as handle:
                code = compile(handle.read(), name, "exec", dont_inherit=True)
            assert _bytecode.unpack(_bytecode.pack(code)) == code, name


MODULE_DIR = "ansible_collections/nodeops/numa_drift/plugins/modules"
SAMPLE_MODULE = '''
import json, sys
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode
_bytecode.install()
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _sample


def main():
    print(json.dumps({"value": _sample.VALUE, "name": __name__, "file": __file__}))
    sys.exit(0)


if __name__ == "__main__":
    main()
'''
SAMPLE_FQN = _bytecode.MODULES + "sample"
# As AnsiballZ runs a module: from its zip, as __main__, with _module_fqn in its globals.
FULL_RUN = r'''
import runpy, sys
sys.path.insert(0, sys.argv[1])
runpy.run_module(sys.argv[2], init_globals={"_module_fqn": sys.argv[2]}, run_name="__main__", alter_sys=True)
'''
# As cached_run does: a zip with the cache alone, the manifest in the environment.
THIN_RUN = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
from ansible_collections.nodeops.numa_drift.plugins.module_utils import _bytecode
print(json.dumps({"outcome": _bytecode.run_cached()}))
'''


def build_module_zip(path):
    build_zip(path)
    with zipfile.ZipFile(str(path), "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MODULE_DIR + "/__init__.py", "")
        archive.writestr(MODULE_DIR + "/sample.py", SAMPLE_MODULE)
    return str(path)


def build_thin_zip(path):
    """The cache module and the package files only: no engine source, no module source."""
    with zipfile.ZipFile(str(path), "w", zipfile.ZIP_DEFLATED) as archive:
        parts = PACKAGE_DIR.split("/")
        for depth in range(1, len(parts) + 1):
            archive.writestr("/".join(parts[:depth]) + "/__init__.py", "")
        with open(os.path.join(ENGINE, "_bytecode.py"), "rb") as handle:
            archive.writestr(PACKAGE_DIR + "/_bytecode.py", handle.read())
    return str(path)


def sample_manifest(**wrong):
    sources = {SAMPLE_FQN: SAMPLE_MODULE, _bytecode.PACKAGE + "_sample": SAMPLE, _bytecode.PACKAGE + "_helper": HELPER}
    entries = [(name, wrong.get(name.rsplit(".", 1)[1], _bytecode.source_digest(source.encode()))) for name, source in sources.items()]
    return _bytecode.format_manifest([entry for entry in entries if entry[1] != "leave-out"])


def run_python(script, args, cache, env_extra=None):
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    env[_bytecode.ENVIRONMENT_VARIABLE] = str(cache)
    env.update(env_extra or {})
    completed = subprocess.run([sys.executable, "-c", script] + list(args), env=env, check=False, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_a_full_run_caches_its_module_and_a_thin_run_runs_it_without_source(tmp_path) -> None:
    full = run_python(FULL_RUN, [build_module_zip(tmp_path / "full.zip"), SAMPLE_FQN], tmp_path / "cache")
    assert full["value"] == 42 and full["name"] == "__main__"
    assert any(name.startswith("modules.sample.") for name in entries(tmp_path / "cache"))
    thin = run_python(THIN_RUN, [build_thin_zip(tmp_path / "thin.zip")], tmp_path / "cache",
                      {_bytecode.MANIFEST_VARIABLE: sample_manifest()})
    # The module's own output: it ran (and exited) from the cache, with no source in the zip.
    assert thin["value"] == 42 and thin["name"] == "__main__"
    assert thin["file"].startswith(os.path.join(str(tmp_path / "cache"), sys.implementation.cache_tag, "modules.sample."))


@pytest.mark.parametrize("case, expected", [
    ("stale_module", "miss"),      # the module's source changed since it was cached
    ("stale_engine", "miss"),      # an engine file changed
    ("missing_import", "miss"),    # the manifest leaves out a file the module imports
    ("malformed", "miss"),
    ("off", "off"),
    ("unusable", "unusable"),      # empty cache, and this interpreter may not write one
])
def test_a_thin_run_that_cannot_run_the_module_says_why(tmp_path, case, expected) -> None:
    run_python(FULL_RUN, [build_module_zip(tmp_path / "full.zip"), SAMPLE_FQN], tmp_path / "cache")
    manifest = {
        "stale_module": sample_manifest(sample="0" * 64),
        "stale_engine": sample_manifest(_helper="0" * 64),
        "missing_import": sample_manifest(_helper="leave-out"),
        "malformed": "modules.sample=xyz",
    }.get(case, sample_manifest())
    cache = tmp_path / ("empty" if case == "unusable" else "cache")
    extra = {_bytecode.MANIFEST_VARIABLE: manifest}
    if case == "off":
        cache = "off"
    if case == "unusable":
        extra["PYTHONDONTWRITEBYTECODE"] = "1"
    thin = run_python(THIN_RUN, [build_thin_zip(tmp_path / "thin.zip")], cache, extra)
    assert thin == {"outcome": expected}


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


@pytest.mark.parametrize(
    "name",
    ["modules/../../x", "modules.a/b", "modules...x", "modules..x", "module_utils.a.b", "plugins.x", "modules.", "x", "modules.a b",
     "module_utils._dr\u0131ft", "../modules.x"],
)
def test_manifest_names_are_the_collections_own_module_names(name) -> None:
    digest = "ab" * 32
    with pytest.raises(ValueError):
        _bytecode.parse_manifest("%s=%s" % (name, digest))
    with pytest.raises(ValueError):
        _bytecode.parse_manifest("modules.numa_drift_facts=%s,%s=%s" % (digest, name, digest))
