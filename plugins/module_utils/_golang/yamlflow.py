# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The YAML subset's flow collections, ``[...]`` and ``{...}``, possibly over several lines.

Stdlib only, Python >= 3.9, no Ansible imports; used by the block reader of :mod:`_golang.goyaml`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import MAX_NESTING as _MAX_DEPTH
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.yamlscalar import (
    YamlError,
    _check_start,
    _json_key,
    _quoted,
    resolve_plain,
)


class _Flow:
    """``[...]`` and ``{...}`` from ``(line, column)``, possibly over several lines."""

    def __init__(self, lines: List[str], line: int, column: int, depth: int) -> None:
        self.lines = lines
        self.line = line
        self.column = column
        self.depth = depth

    def parse(self) -> Tuple[Any, int, int]:
        value = self._node()
        return value, self.line, self.column

    def _text(self) -> str:
        return self.lines[self.line]

    def _skip(self) -> str:
        """Skip spaces, comments and line ends; the next character ('' at the end of the text)."""
        while self.line < len(self.lines):
            text = self._text()
            while self.column < len(text) and text[self.column] in " \t":
                self.column += 1
            if self.column < len(text) and not (text[self.column] == "#" and (self.column == 0 or text[self.column - 1] in " \t")):
                return text[self.column]
            self.line += 1
            self.column = 0
        return ""

    def _error(self, message: str, unsupported: bool = False) -> YamlError:
        return YamlError(min(self.line, len(self.lines) - 1) + 1, message, unsupported)

    def _node(self) -> Any:
        char = self._skip()
        if char == "[":
            return self._collection("]")
        if char == "{":
            return self._collection("}")
        return self._scalar()

    def _collection(self, closing: str) -> Any:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise self._error("nested deeper than %d levels" % _MAX_DEPTH, True)
        self.column += 1
        items: List[Any] = []
        mapping: Dict[str, Any] = {}
        while True:
            char = self._skip()
            if char == closing:
                break
            if char == "":
                raise self._error("%s is never closed" % ("[" if closing == "]" else "{"))
            number = self.line + 1
            if closing == "}":
                key = _json_key(self._scalar(key=True), number)
                if self._skip() == ":":
                    self.column += 1
                    value = None if self._skip() in (",", "}", "") else self._node()  # "": the text ends (unclosed, below)
                else:
                    value = None
                mapping[key] = value
            else:
                items.append(self._node())
                if self._skip() == ":":
                    raise self._error("mappings inside a flow sequence are not supported", True)
            char = self._skip()
            if char == ",":
                self.column += 1
            elif char == "":
                raise self._error("%s is never closed" % ("[" if closing == "]" else "{"))
            elif char != closing:
                raise self._error("expected ',' or '%s' in a flow collection" % closing)
        self.column += 1
        self.depth -= 1
        return mapping if closing == "}" else items

    def _scalar(self, key: bool = False) -> Any:
        text = self._text()
        number = self.line + 1
        start = self.column
        if start >= len(text):
            raise self._error("a value is missing")
        char = text[start]
        if char in "\"'":
            value, self.column = _quoted(text, start, number)
            return value
        if char in ",]}":
            raise self._error("a value is missing before %r" % char)
        if key and char in "[{":
            raise self._error("a collection as a mapping key cannot be converted to JSON")  # sigs.k8s.io/yaml
        _check_start(text, number, start)
        if char == "-" and text[start + 1 : start + 2] in ("", " ", "\t"):
            raise self._error("block sequences inside flow collections are not supported")
        index = start
        while index < len(text):
            char = text[index]
            if char in ",[]{}":
                break
            if char == ":" and (index + 1 == len(text) or text[index + 1] in " \t,[]{}"):
                break
            if char == "#" and text[index - 1] in " \t":
                break
            index += 1
        self.column = index
        return resolve_plain(text[start:index].rstrip(" \t"), number)
