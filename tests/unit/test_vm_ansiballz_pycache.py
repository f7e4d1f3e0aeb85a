# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guests' code cache for Ansible's own module_utils (tests/vm/ansiballz_pycache.py), run on the
host: each case is a fresh interpreter (``python -S``: nothing installed is importable) with the
finder installed and a zip on ``sys.path`` shaped like an AnsiballZ payload. The guests load it
from a ``.pth`` line (tests/vm/build-image.sh)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import ansible

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FINDER = os.path.join(CHECKOUT, "tests", "vm", "ansiballz_pycache.py")

# Imports the given modules through the finder and prints, per module, how its code was had
# ("hit", "stored", "compiled", or the loader's class for names the finder leaves alone) and __file__.
RUN = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("nd_ansiballz_pycache", sys.argv[1])
finder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(finder)
finder.install(sys.argv[2])
sys.path.insert(0, sys.argv[3])
seen = {}
for name in sys.argv[4:]:
    module = __import__(name, fromlist=["_"])
    seen[name] = {"how": getattr(module.__loader__, "outcome", type(module.__loader__).__name__),
                  "file": module.__file__, "value": getattr(module, "VALUE", None)}
print(json.dumps(seen))
"""

PAYLOAD = {
    "ansible/__init__.py": "",
    "ansible/module_utils/__init__.py": "",
    "ansible/module_utils/thing.py": "VALUE = 'one'\n\ndef boom():\n    raise RuntimeError('from thing')  # the line\n",
    "ansible/module_utils/data.json": '{"answer": 42}',
    "ansible_collections/__init__.py": "",
    "ansible_collections/other.py": "VALUE = 'theirs'\n",
}


def make_zip(path, files):
    with zipfile.ZipFile(str(path), "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return str(path)


def run(cache, payload, *names, code=RUN):
    proc = subprocess.run([sys.executable, "-S", "-c", code, FINDER, str(cache), payload] + list(names),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def how(seen):
    return {name: entry["how"] for name, entry in seen.items()}


def test_first_run_stores_the_code_and_the_next_run_takes_it(tmp_path):
    payload = make_zip(tmp_path / "ansible_ping_payload.zip", PAYLOAD)
    cache = tmp_path / "cache"
    first = run(cache, payload, "ansible.module_utils.thing")
    assert how(first) == {"ansible.module_utils.thing": "stored"}
    assert first["ansible.module_utils.thing"]["file"] == os.path.join(payload, "ansible/module_utils/thing.py")
    # one entry per module: the package parents too, named after the module and its source's digest
    entries = sorted(name.split(".code")[0].rsplit(".", 1)[0] for name in os.listdir(str(cache)))
    assert entries == ["ansible", "ansible.module_utils", "ansible.module_utils.thing"]
    second = run(cache, payload, "ansible", "ansible.module_utils", "ansible.module_utils.thing")
    assert how(second) == dict.fromkeys(second, "hit")
    assert second["ansible.module_utils.thing"]["value"] == "one"


def test_a_changed_source_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    run(cache, make_zip(tmp_path / "old.zip", PAYLOAD), "ansible.module_utils.thing")
    changed = dict(PAYLOAD, **{"ansible/module_utils/thing.py": "VALUE = 'two'\n"})
    seen = run(cache, make_zip(tmp_path / "new.zip", changed), "ansible.module_utils", "ansible.module_utils.thing")
    assert how(seen) == {"ansible.module_utils": "hit", "ansible.module_utils.thing": "stored"}
    assert seen["ansible.module_utils.thing"]["value"] == "two"


def test_a_damaged_entry_is_compiled_from_the_source(tmp_path):
    cache = tmp_path / "cache"
    payload = make_zip(tmp_path / "p.zip", PAYLOAD)
    run(cache, payload, "ansible.module_utils.thing")
    for name in os.listdir(str(cache)):
        with open(os.path.join(str(cache), name), "r+b") as handle:
            handle.truncate(20)  # the magic number and a cut marshal stream
    seen = run(cache, payload, "ansible.module_utils.thing")
    assert how(seen) == {"ansible.module_utils.thing": "stored"}
    assert seen["ansible.module_utils.thing"]["value"] == "one"


def test_a_cache_that_cannot_be_written_only_costs_the_compile(tmp_path):
    cache = tmp_path / "not-a-directory"
    cache.write_text("")
    seen = run(cache, make_zip(tmp_path / "p.zip", PAYLOAD), "ansible.module_utils.thing")
    assert how(seen) == {"ansible.module_utils.thing": "compiled"}
    assert seen["ansible.module_utils.thing"]["value"] == "one"


def test_other_names_are_left_to_zipimport(tmp_path):
    seen = run(tmp_path / "cache", make_zip(tmp_path / "p.zip", PAYLOAD), "ansible_collections.other")
    assert how(seen) == {"ansible_collections.other": "zipimporter"}
    assert not (tmp_path / "cache").exists()


def test_tracebacks_show_the_zip_path_and_the_source_line(tmp_path):
    code = RUN.replace("print(json.dumps(seen))", "import ansible.module_utils.thing as t\nt.boom()")
    proc = subprocess.run([sys.executable, "-S", "-c", code, FINDER, str(tmp_path / "cache"),
                           make_zip(tmp_path / "p.zip", PAYLOAD), "ansible.module_utils.thing"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert 'p.zip/ansible/module_utils/thing.py", line 4, in boom' in proc.stderr
    assert "raise RuntimeError('from thing')  # the line" in proc.stderr


def test_package_data_is_read_from_the_zip(tmp_path):
    code = RUN.replace("print(json.dumps(seen))",
                       "import pkgutil\nprint(pkgutil.get_data('ansible.module_utils', 'data.json').decode())")
    proc = subprocess.run([sys.executable, "-S", "-c", code, FINDER, str(tmp_path / "cache"),
                           make_zip(tmp_path / "p.zip", PAYLOAD), "ansible.module_utils"],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (0, '{"answer": 42}\n'), proc.stderr


def test_ansible_basic_itself_loads_from_the_cache(tmp_path):
    """Ansible's own module_utils (the controller's release, as AnsiballZ ships them) import through the
    finder and, the second time, compile nothing."""
    root = os.path.dirname(os.path.dirname(ansible.__file__))
    files = {}
    for folder, _dirs, names in os.walk(os.path.join(root, "ansible", "module_utils")):
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    files[os.path.relpath(path, root)] = handle.read()
    files["ansible/__init__.py"] = ""
    payload = make_zip(tmp_path / "ansible_ping_payload.zip", files)
    cache = tmp_path / "cache"
    first = run(cache, payload, "ansible.module_utils.basic")
    assert how(first) == {"ansible.module_utils.basic": "stored"}
    stored = written(cache)
    assert len(stored) > 20  # basic and what it imports
    second = run(cache, payload, "ansible.module_utils.basic")
    assert how(second) == {"ansible.module_utils.basic": "hit"}
    assert written(cache) == stored  # nothing compiled, nothing written


def written(cache):
    return {name: os.stat(os.path.join(str(cache), name)).st_mtime_ns for name in os.listdir(str(cache))}
