# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Words a user has: nothing a user reads points at a document outside the repository.

Messages, module documentation, code comments and docs cite kubelet's own functions and files
(``getDefaultMachineState``, memorymanager/state/checkpoint.go, ...) or this repository's docs,
never the development notes beside the checkout (``../shared/...``, ``design.md``) or the
numbered sections of a specification the user does not have (``spec 6.1``). And the supported
kubelet releases are said in one line, the same in README.md and docs/install.md.
"""

from __future__ import annotations

import os
import re

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# What a user of the collection reads (the tests are development material).
USER_FACING = ("README.md", "galaxy.yml", "meta", "plugins", "roles", "playbooks", "docs", "examples", "extensions", "awx",
               "execution-environment", "changelogs/fragments")
OUTSIDE = re.compile(r"\.\./shared|shared/(notes|spec|vectors)|\bdesign\.md|\bspec (section |sections )?\d|\(spec\)", re.IGNORECASE)
SUPPORTED = ("Tested against kubelet v1.34, v1.35, v1.36, v1.37 (kubelet's own memory-manager code at v1.34.4, v1.35.4,"
             " v1.36.3, v1.37.2 judges every verdict in CI; unmodified kubelet v1.34.4 and v1.37.2 binaries crash-loop and"
             " are brought back in multi-NUMA QEMU guests, one of them across an upgrade from v1.34.4 to v1.37.2)")


def _files():
    for entry in USER_FACING:
        path = os.path.join(CHECKOUT, entry)
        if os.path.isfile(path):
            yield path
        for base, dirs, names in os.walk(path):
            dirs[:] = [name for name in dirs if name not in ("__pycache__", ".ansible")]
            for name in names:
                if name.endswith((".py", ".md", ".yml", ".yaml", ".j2", ".sh", ".txt", ".rst", ".cfg")):
                    yield os.path.join(base, name)


def test_nothing_cites_a_document_outside_the_repository():
    found = []
    for path in _files():
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if OUTSIDE.search(line):
                    found.append("%s:%d: %s" % (os.path.relpath(path, CHECKOUT), number, line.strip()[:120]))
    assert found == [], "\n".join(found)


def test_the_pattern_catches_the_citations_it_is_meant_to():
    for text in ("see ../shared/notes/kubelet-layouts.md", "(spec 6.1)", "spec 5.2 step 4", "(spec section 5)",
                 "design.md's vocabulary", "shared/spec/kubelet-memory-manager.md"):
        assert OUTSIDE.search(text), text
    for text in ("argument_spec", "KEP-6232", "docs/safety.md", "the role's argument specs"):
        assert not OUTSIDE.search(text), text


def _one_line(path):
    with open(os.path.join(CHECKOUT, path), encoding="utf-8") as handle:
        return " ".join(handle.read().split())


def test_the_supported_kubelet_releases_are_said_in_readme_and_install():
    assert SUPPORTED in _one_line("README.md")
    assert SUPPORTED in _one_line(os.path.join("docs", "install.md"))


def test_docs_have_a_start_here_index_listing_every_page():
    index = _one_line(os.path.join("docs", "README.md"))
    assert "start here" in index.lower()
    pages = sorted(name for name in os.listdir(os.path.join(CHECKOUT, "docs")) if name.endswith(".md") and name != "README.md")
    assert [page for page in pages if "(%s)" % page not in index] == []
