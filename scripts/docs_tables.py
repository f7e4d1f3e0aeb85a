# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option tables of the docs, generated from where the options are defined.

A page marks each table with ``<!-- options: SOURCE NAME... -->`` followed by the table, ended by
``<!-- end options -->``. SOURCE is ``role:<role>`` (its ``meta/argument_specs.yml``, every entry point) or
``module:<module>`` (its ``DOCUMENTATION``, doc fragments included); the NAMEs are the options the table shows, in
that order. The rows say the option, its type, its default and its description (Ansible's markup as Markdown).

    python3 scripts/docs_tables.py           rewrite the tables of docs/*.md in place
    python3 scripts/docs_tables.py --check   exit 1 when a table differs from what its source says

tests/unit/test_docs_tables.py fails when a table is stale, and when a role option is in no table.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import yaml

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOCS = os.path.join(CHECKOUT, "docs")
BLOCK = re.compile(r"(<!-- options: (?P<source>\S+) (?P<names>[^>]*?) -->\n)(?P<table>.*?)(<!-- end options -->)", re.DOTALL)
MARKUP = re.compile(r"\b(RV|[BCIMOVRLUPE])\(((?:[^()\\]|\\.|\([^()]*\))*)\)")


def markdown(text: Any) -> str:
    """Ansible's documentation markup as Markdown, on one line (a table cell)."""
    if isinstance(text, list):
        text = " ".join(str(part) for part in text)

    def one(match: "re.Match[str]") -> str:
        kind, body = match.group(1), re.sub(r"\\(.)", r"\1", match.group(2))
        if kind == "I":
            return "*%s*" % body
        if kind == "B":
            return "**%s**" % body
        if kind == "L":
            label, _comma, url = body.rpartition(",")
            return "[%s](%s)" % (label.strip(), url.strip())
        if kind == "R":
            return body.rpartition(",")[0].strip() or body
        if kind in ("M", "P"):
            return "`%s`" % body.split("#", 1)[0]
        return "`%s`" % body  # C, O, V, RV, E, U

    return MARKUP.sub(one, " ".join(str(text).split())).replace("|", "\\|")


def role_options(role: str) -> Dict[str, Mapping[str, Any]]:
    """Every option of the role's entry points (the same name means the same option)."""
    with open(os.path.join(CHECKOUT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    options: Dict[str, Mapping[str, Any]] = {}
    for entry in specs.values():
        for name, option in (entry.get("options") or {}).items():
            options.setdefault(name, option)
    return options


def _documentation(path: str, variable: str = "DOCUMENTATION") -> Dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    match = re.search(variable + r' = r?"""(.*?)"""', source, re.DOTALL)
    if not match:
        raise SystemExit("%s: no %s" % (path, variable))
    return yaml.safe_load(match.group(1)) or {}


def module_options(module: str) -> Dict[str, Mapping[str, Any]]:
    """The module's options as ansible-doc shows them: this collection's doc fragments first, its own over them."""
    doc = _documentation(os.path.join(CHECKOUT, "plugins", "modules", module + ".py"))
    fragments = doc.get("extends_documentation_fragment") or []
    options: Dict[str, Mapping[str, Any]] = {}
    for fragment in [fragments] if isinstance(fragments, str) else fragments:
        if fragment.startswith("nodeops.numa_drift."):
            path = os.path.join(CHECKOUT, "plugins", "doc_fragments", fragment.split(".")[-1] + ".py")
            options.update(_documentation(path).get("options") or {})
    options.update(doc.get("options") or {})
    return options


def default_text(option: Mapping[str, Any]) -> str:
    if "default" not in option or option["default"] is None:
        return "unset"
    value = option["default"]
    if isinstance(value, bool):
        return "`%s`" % str(value).lower()
    if value == "":
        return "`''`"
    if value in ({}, []):
        return "`%s`" % ("{}" if value == {} else "[]")
    return "`%s`" % value


def table(options: Mapping[str, Mapping[str, Any]], names: Sequence[str], source: str) -> str:
    rows = ["| %s | type | default | meaning |" % ("variable" if source.startswith("role:") else "option"), "|---|---|---|---|"]
    for name in names:
        if name not in options:
            raise SystemExit("%s has no option %s" % (source, name))
        option = options[name]
        kind = option.get("type", "str") + ("/" + option["elements"] if option.get("elements") else "")
        rows.append("| `%s` | %s | %s | %s |" % (name, kind, default_text(option), markdown(option.get("description", ""))))
    return "\n".join(rows) + "\n"


def options_of(source: str) -> Dict[str, Mapping[str, Any]]:
    kind, _colon, name = source.partition(":")
    if kind == "role":
        return role_options(name)
    if kind == "module":
        return module_options(name)
    raise SystemExit("unknown options source %s (role:<name> or module:<name>)" % source)


def render(page: str) -> Tuple[str, List[Tuple[str, List[str]]]]:
    """The page with its tables generated, and the (source, names) of each table."""
    seen: List[Tuple[str, List[str]]] = []

    def one(match: "re.Match[str]") -> str:
        names = match.group("names").split()
        seen.append((match.group("source"), names))
        return match.group(1) + table(options_of(match.group("source")), names, match.group("source")) + match.group(5)

    return BLOCK.sub(one, page), seen


def pages() -> List[str]:
    return sorted(os.path.join(DOCS, name) for name in os.listdir(DOCS) if name.endswith(".md"))


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a table is stale, change nothing")
    args = parser.parse_args(argv)
    stale = []
    for path in pages():
        with open(path, encoding="utf-8") as handle:
            page = handle.read()
        generated, _tables = render(page)
        if generated != page:
            stale.append(os.path.relpath(path, CHECKOUT))
            if not args.check:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(generated)
    if stale:
        print(("stale option tables (run python3 scripts/docs_tables.py): " if args.check else "rewrote: ") + ", ".join(stale))
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
