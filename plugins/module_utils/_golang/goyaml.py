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
keys ``<<``, directives, a second document, tabs as indentation) raises :class:`YamlError` with
the line number, so the caller can refuse instead of guessing.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import (
    INT64_MAX as _INT64_MAX,
    INT64_MIN as _INT64_MIN,
    MAX_NESTING as _MAX_DEPTH,
    UINT64_MAX as _UINT64_MAX,
    bounded_int,
    shown as _shown,
)

__all__ = ["SUBSET_NOTE", "YamlError", "load", "load_mapping", "resolve_plain"]

SUBSET_NOTE = "the probe reads a subset of YAML: pass the kubelet options explicitly"

# go-yaml v2 resolve.go resolveMapList: YAML 1.1 booleans and nulls.
_TRUE = frozenset(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"))
_FALSE = frozenset(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"))
_NULL = frozenset(("", "~", "null", "Null", "NULL"))
_NOT_JSON = frozenset((".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"))
# go-yaml v2 yamlStyleFloat; a leading "." is parsed with strconv.ParseFloat.
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")
# strconv.ParseInt(s, 0, 64): sign, then 0x / 0o / 0b / a leading 0 (octal) / decimal.
_INT = re.compile(r"([-+]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|(0[0-7]*)|([1-9][0-9]*))\Z")
_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r",
    "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_UNSUPPORTED = {
    "&": "anchors (&) are not supported",
    "*": "aliases (*) are not supported",
    "!": "tags (!) are not supported",
    "|": "block scalars (|) are not supported",
    ">": "block scalars (>) are not supported",
    "%": "a plain scalar cannot start with %",
    "@": "a plain scalar cannot start with @",
    "`": "a plain scalar cannot start with `",
}


class YamlError(ValueError):
    """Not valid YAML, or (``unsupported``) valid YAML outside the subset; ``line`` is 1-based."""

    def __init__(self, line: int, message: str, unsupported: bool = False) -> None:
        super().__init__("line %d: %s" % (line, message))
        self.line = line
        self.message = message
        self.unsupported = unsupported


def _unsupported(line: int, message: str) -> YamlError:
    return YamlError(line, message, unsupported=True)


_OUT_OF_RANGE = object()  # marks an integer literal beyond int64/uint64


def _go_int(text: str) -> Any:
    """``strconv.ParseInt(s, 0, 64)`` then ``ParseUint``: the int, ``None`` when ``text`` is no
    integer literal, :data:`_OUT_OF_RANGE` when it is one beyond 64 bits."""
    match = _INT.match(text)
    if not match:
        return None
    sign, hexa, octal, binary, zero_octal, decimal = match.groups()
    if hexa is not None:
        value = bounded_int(hexa, 16)
    elif octal is not None:
        value = bounded_int(octal, 8)
    elif binary is not None:
        value = bounded_int(binary, 2)
    elif zero_octal is not None:
        value = bounded_int(zero_octal, 8)
    else:
        value = bounded_int(decimal)
    if value is None:
        return _OUT_OF_RANGE  # beyond 64 bits: ParseInt and ParseUint both fail
    if sign == "-":
        value = -value
    if _INT64_MIN <= value <= _INT64_MAX or (not sign and value <= _UINT64_MAX):  # ParseInt, then ParseUint
        return value
    return _OUT_OF_RANGE


def _json_float(value: float) -> Any:
    """The float as JSON carries it: encoding/json writes an integral float below 1e21 in its
    shortest decimal digits without a fraction, which JSON decodes as an integer."""
    if value != int(value) or abs(value) >= 1e21:
        return value
    mantissa, _e, exponent = repr(value).partition("e")
    whole, _dot, fraction = mantissa.partition(".")
    fraction = fraction.rstrip("0")
    return int(whole + fraction) * 10 ** (int(exponent or "0") - len(fraction))


def resolve_plain(text: str, line: int = 0) -> Any:
    """A plain scalar as go-yaml v2 resolves it (resolve.go), then as JSON carries it."""
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _NOT_JSON:
        raise YamlError(line, "%s cannot be converted to JSON" % text)
    first = text[0]
    if first == ".":
        if _DOT_FLOAT.match(text):
            value = float(text)
            if value not in (float("inf"), float("-inf")):  # ParseFloat's ErrRange leaves a string
                return _json_float(value)
    elif first in "+-0123456789":
        plain = text.replace("_", "")
        number = _go_int(plain)
        if number is _OUT_OF_RANGE:
            # go-yaml would fall back to a float or a string, which no integer field of kubelet
            # accepts: refuse by line rather than guess what kubelet makes of it.
            raise YamlError(line, "the integer %s does not fit in 64 bits (kubelet's widest integers)" % _shown(plain))
        if number is not None:
            return number
        if _FLOAT.match(plain):
            value = float(plain)
            if value not in (float("inf"), float("-inf")):
                return _json_float(value)
    # Timestamps stay strings when decoded into interface{} (go-yaml v2 decode.go).
    return text


def _json_key(value: Any, line: int) -> str:
    # sigs.k8s.io/yaml YAMLToJSON: keys become strings.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    raise _unsupported(line, "a %s mapping key is not supported" % ("null" if value is None else "floating-point"))


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


def _check_start(text: str, line: int) -> None:
    first = text[0]
    if first in _UNSUPPORTED:
        raise YamlError(line, _UNSUPPORTED[first], unsupported=first in "&*!|>")
    if first == "?" and (len(text) == 1 or text[1] in " \t"):
        raise _unsupported(line, "complex mapping keys (?) are not supported")


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


def _quoted(text: str, start: int, number: int) -> Tuple[str, int]:
    """A quoted scalar at ``text[start]``: its value and the index after its closing quote."""
    quote = text[start]
    out = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if quote == "'":
            if char == "'":
                if text.startswith("'", index + 1):
                    out.append("'")
                    index += 2
                    continue
                return "".join(out), index + 1
        elif char == '"':
            return "".join(out), index + 1
        elif char == "\\":
            code = text[index + 1 : index + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                index += 2
                continue
            if code in _HEX_ESCAPES:
                digits = text[index + 2 : index + 2 + _HEX_ESCAPES[code]]
                if len(digits) != _HEX_ESCAPES[code] or not all(c in "0123456789abcdefABCDEF" for c in digits):
                    raise YamlError(number, "bad escape \\%s%s in a double-quoted string" % (code, digits))
                out.append(chr(int(digits, 16)))
                index += 2 + len(digits)
                continue
            raise YamlError(number, "unknown escape \\%s in a double-quoted string" % code)
        out.append(char)
        index += 1
    raise _unsupported(number, "a quoted string must end on its line (multi-line strings are not supported)")


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
                    value = None if self._skip() in (",", "}") else self._node()
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
        _check_start(text[start:], number)
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
        return None, "the document is a %s, not a %s" % (type(document).__name__, what)
    return document, None
