# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The docs' option tables are generated from argument_specs.yml and DOCUMENTATION (scripts/docs_tables.py): never stale,
and every option of the role and the node options is in one."""

from __future__ import annotations

import importlib.util
import os

import pytest

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPEC = importlib.util.spec_from_file_location("docs_tables", os.path.join(CHECKOUT, "scripts", "docs_tables.py"))
docs_tables = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(docs_tables)


def tables_of(page: str):
    with open(os.path.join(CHECKOUT, "docs", page), encoding="utf-8") as handle:
        return docs_tables.render(handle.read())


def test_no_option_table_is_stale(capsys) -> None:
    assert docs_tables.main(["--check"]) == 0, capsys.readouterr().out


def test_every_role_variable_is_in_one_table_of_variables_md() -> None:
    _page, tables = tables_of("variables.md")
    shown = [name for source, names in tables if source == "role:remediate" for name in names]
    assert sorted(shown) == sorted(docs_tables.role_options("remediate")), "variables in no table, or in two"


def test_the_node_options_table_shows_every_option_of_the_doc_fragment() -> None:
    _page, tables = tables_of("modules.md")
    shown = [name for source, names in tables if source == "module:numa_drift_facts" for name in names]
    fragment = docs_tables._documentation(os.path.join(CHECKOUT, "plugins", "doc_fragments", "node_options.py"))  # pylint: disable=protected-access
    assert sorted(shown) == sorted(fragment["options"])


def test_a_changed_description_makes_the_table_stale(monkeypatch) -> None:
    page, _tables = tables_of("variables.md")
    options = {name: dict(option) for name, option in docs_tables.role_options("remediate").items()}
    options["remediate_root"]["description"] = "Where the node's I(root) is, see O(remediate_backup_dir)."
    monkeypatch.setattr(docs_tables, "role_options", lambda role: options)
    generated, _tables = docs_tables.render(page)
    assert generated != page
    assert "| `remediate_root` | path | `/` | Where the node's *root* is, see `remediate_backup_dir`. |" in generated


def test_an_unknown_option_in_a_table_is_an_error() -> None:
    with pytest.raises(SystemExit, match="role:remediate has no option remediate_nothing"):
        docs_tables.render("<!-- options: role:remediate remediate_nothing -->\n<!-- end options -->\n")


def test_ansibles_markup_becomes_markdown() -> None:
    assert docs_tables.markdown("see B(bold), I(it), RV(result), R(the text,anchor), L(kubelet docs,https://k8s.io/x), C(a\\)b), O(x=y), "
                                "M(ns.c.m#module) and C(a|b)") == (
        "see **bold**, *it*, `result`, the text, [kubelet docs](https://k8s.io/x), `a)b`, `x=y`, `ns.c.m` and `a\\|b`")
