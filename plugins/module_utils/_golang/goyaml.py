# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small YAML reader for kubelet configuration files and k3s/RKE2 ``config.yaml``.

Stdlib only, Python >= 3.9, no Ansible imports. Kubelet reads YAML through sigs.k8s.io/yaml:
go-yaml v2 parses the document (YAML 1.1 scalars: ``yes``/``no``/``on``/``off``/``y``/``n`` are
booleans, ``0777`` is octal), then it becomes JSON (map keys turn into strings). :func:`load`
returns what that JSON decodes to in Python.

The subset: block mappings and sequences (also a sequence at its key's indentation), flow
``[...]`` and ``{...}`` (over several lines too), plain, single- and double-quoted scalars on
one line, comments, one document with an optional ``---`` and ``...``. Anything else (anchors,
aliases, tags, block scalars ``|``/``>``, multi-line plain or quoted scalars, ``?`` keys, merge
keys ``<<``, directives, a second document, tabs as indentation) raises :class:`YamlError` (``_golang.yamlscalar``) with
the line number, so the caller can refuse instead of guessing. This file is the block structure;
scalars are :mod:`_golang.yamlscalar`, flow collections :mod:`_golang.yamlflow`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import MAX_NESTING as _MAX_DEPTH
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.yamlflow import _Flow
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.yamlscalar import (
    YamlError,
    _check_start,
    _json_key,
    _quoted,
    _unsupported,
    resolve_plain,
)

__all__ = ["SUBSET_NOTE", "load", "load_mapping"]

SUBSET_NOTE = "the probe reads a subset of YAML: pass the kubelet options explicitly"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _comment_at(text: str, start: int = 0) -> int:
    """Where a comment starts in ``text`` (a ``#`` at the start or after whitespace), else its length."""
    index = text.find("#", start)
    while index != -1:
        if index == 0 or text[index - 1] in " \t":
            return index
        index = text.find("#", index + 1)
    return len(text)


def _is_entry(content: str) -> bool:
    return content == "-" or content.startswith("- ")


class _Reader:
    def __init__(self, text: str) -> None:
        self.lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
        self.index = 0
        self.depth = 0
        self._prepare()

    # ------------------------------------------------------------------ lines

    def _prepare(self) -> None:
        """Blank out document markers and comment lines; reject what starts outside the subset."""
        seen_content = seen_start = ended = False
        for number, line in enumerate(self.lines):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                self.lines[number] = ""
                continue
            lead = line[: len(line) - len(line.lstrip(" \t"))]
            if "\t" in lead:
                raise YamlError(number + 1, "tabs cannot indent YAML")
            if ended:
                raise YamlError(number + 1, "content after the end of the document (...)")
            if line.startswith("%"):
                raise _unsupported(number + 1, "directives (%) are not supported")
            marker = line[:3]
            if marker in ("---", "...") and (len(line) == 3 or line[3] in " \t"):
                rest = line[3:].strip()
                if rest and not rest.startswith("#"):
                    raise _unsupported(number + 1, "content on a document marker line is not supported")
                if marker == "...":
                    ended = True
                elif seen_content or seen_start:
                    raise _unsupported(number + 1, "more than one document is not supported")
                seen_start = True
                self.lines[number] = ""
                continue
            seen_content = True

    def _next(self, index: int) -> int:
        while index < len(self.lines) and not self.lines[index]:
            index += 1
        return index

    def _indent_at(self, index: int) -> int:
        return _indent(self.lines[index]) if index < len(self.lines) else -1

    # ------------------------------------------------------------------ block

    def document(self) -> Any:
        self.index = self._next(0)
        if self.index >= len(self.lines):
            return None
        value = self._node()
        self.index = self._next(self.index)
        if self.index < len(self.lines):
            raise YamlError(self.index + 1, "unexpected content (bad indentation?)")
        return value

    def _node(self) -> Any:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _unsupported(self.index + 1, "nested deeper than %d levels" % _MAX_DEPTH)
        line = self.lines[self.index]
        indent = _indent(line)
        content = line[indent:]
        if _is_entry(content):
            value = self._sequence(indent)
        elif self._split_key(content, self.index + 1) is not None:
            value = self._mapping(indent)
        else:
            value = self._inline(indent, content)
            if self.index < len(self.lines) and self._indent_at(self.index) >= indent:
                raise _unsupported(self.index + 1, "multi-line plain scalars are not supported")
        self.depth -= 1
        return value

    def _block_value(self, indent: int, allow_entries: bool) -> Any:
        """The value of ``key:`` or ``-`` with nothing after it: a nested node below, else null."""
        following = self._next(self.index + 1)
        self.index = following
        if following >= len(self.lines):
            return None
        deeper = self._indent_at(following)
        if deeper > indent:
            return self._node()
        if allow_entries and deeper == indent and _is_entry(self.lines[following][indent:]):
            return self._sequence(indent)  # "key:\n- a": a sequence at its key's indentation
        return None

    def _entry(self, indent: int, what: str) -> Optional[str]:
        """The current line's text from ``indent`` when it continues a block at ``indent``
        (``None`` when the block ended: no more lines, or a line indented less)."""
        if self.index >= len(self.lines):
            return None
        current = self._indent_at(self.index)
        if current < indent:
            return None
        if current > indent:
            raise YamlError(self.index + 1, "bad indentation of a %s entry" % what)
        return self.lines[self.index][indent:]

    def _mapping(self, indent: int) -> Dict[str, Any]:
        result: Dict[str, Any] = {}
        while True:
            content = self._entry(indent, "mapping")
            if content is None:
                break
            number = self.index + 1
            split = None if _is_entry(content) else self._split_key(content, number)
            if split is None:
                raise YamlError(number, "expected 'key: value' in a mapping")
            key, rest = split
            rest = rest.lstrip(" \t")
            if not rest or rest.startswith("#"):
                value = self._block_value(indent, True)
            else:
                value = self._inline(indent, rest.rstrip(" \t"), len(self.lines[self.index]) - len(rest))
                if self.index < len(self.lines) and self._indent_at(self.index) > indent:
                    raise _unsupported(self.index + 1, "multi-line plain scalars are not supported")
            result[key] = value
        return result

    def _sequence(self, indent: int) -> List[Any]:
        result: List[Any] = []
        while True:
            content = self._entry(indent, "sequence")
            if content is None or not _is_entry(content):
                break  # the mapping this sequence is the value of goes on
            rest = content[1:]
            body = rest.lstrip(" ")
            if not body or body.startswith("#"):
                result.append(self._block_value(indent, False))
                continue
            # "- a: 1" / "- - a": the entry's node starts where its text starts.
            column = indent + 1 + len(rest) - len(body)
            self.lines[self.index] = " " * column + body
            result.append(self._node())
        return result

    def _split_key(self, content: str, number: int) -> Optional[Tuple[str, str]]:
        """``(key, rest)`` when ``content`` starts with ``key:``, else ``None``."""
        _check_start(content, number)
        if content[0] in "\"'":
            text, end = _quoted(content, 0, number)
            after = content[end:].lstrip(" \t")
            if after.startswith(":") and (len(after) == 1 or after[1] in " \t"):
                return text, after[1:]
            return None
        if content[0] in "[{":
            return None
        limit = _comment_at(content)
        index = content.find(":", 0, limit)
        while index != -1:
            if index + 1 == limit or content[index + 1] in " \t":
                plain = content[:index].rstrip(" \t")
                if not plain:
                    raise YamlError(number, "an empty mapping key is not supported")
                if plain == "<<":
                    raise _unsupported(number, "merge keys (<<) are not supported")
                return _json_key(resolve_plain(plain, number), number), content[index + 1 :]
            index = content.find(":", index + 1, limit)
        return None

    def _inline(self, indent: int, text: str, column: Optional[int] = None) -> Any:
        """A scalar or flow collection that starts on the current line; moves past its last line."""
        number = self.index + 1
        column = indent if column is None else column
        _check_start(text, number)
        first = text[0]
        if first in "[{":
            value, line, end = _Flow(self.lines, self.index, column, self.depth).parse()
            _only_comment(self.lines[line][end:], line + 1)
            self.index = self._next(line + 1)
            return value
        self.index = self._next(self.index + 1)
        if first in "\"'":
            value, end = _quoted(text, 0, number)
            _only_comment(text[end:], number)
            return value
        if _is_entry(text):
            raise YamlError(number, "a sequence entry cannot start here")
        plain = text[: _comment_at(text)].rstrip(" \t")
        index = plain.find(":")
        while index != -1:
            if index + 1 == len(plain) or plain[index + 1] in " \t":
                raise YamlError(number, "a mapping value is not allowed here")
            index = plain.find(":", index + 1)
        return resolve_plain(plain, number)


def _only_comment(rest: str, number: int) -> None:
    rest = rest.strip(" \t")
    if rest and not rest.startswith("#"):
        raise YamlError(number, "unexpected text after a value: %r" % rest[:40])


def load(text: str) -> Any:
    """The document in ``text`` as kubelet's JSON sees it; :class:`YamlError` outside the subset."""
    return _Reader(text.lstrip("\ufeff")).document()


def load_mapping(text: str, what: str = "mapping") -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """``(mapping, None)`` (``{}`` for an empty document) or ``(None, problem)``."""
    try:
        document = load(text)
    except YamlError as error:
        if error.unsupported:
            return None, "%s (%s)" % (error, SUBSET_NOTE)
        return None, "not valid YAML: %s" % error
    if document is None:
        return {}, None
    if not isinstance(document, dict):
        return None, "the document is %s, not a %s" % (kind_of(document), what)
    return document, None
