# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The YAML subset's scalars and errors, as go-yaml v2 resolves them and sigs.k8s.io/yaml turns them into JSON.

Stdlib only, Python >= 3.9, no Ansible imports. :func:`resolve_plain` gives a plain scalar its YAML 1.1 value
(``yes``/``no``/``on``/``off`` booleans, ``0777`` octal, floats that JSON can hold), ``_quoted`` reads a single-
or double-quoted scalar on one line, ``_check_start`` refuses what may not start a node in the subset;
:class:`YamlError` is the one error of the reader (:mod:`_golang.goyaml`).
"""

from __future__ import annotations

import re
from typing import Any, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import (
    INT64_MAX as _INT64_MAX,
    INT64_MIN as _INT64_MIN,
    UINT64_MAX as _UINT64_MAX,
    bounded_int,
    shown as _shown,
)

__all__ = ["YamlError", "resolve_plain"]


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


def _check_start(text: str, line: int, start: int = 0) -> None:
    """Refuse what may not start a node in the subset, at ``text[start]`` (an index: a scalar in a long flow
    collection is checked without copying the rest of its line)."""
    first = text[start]
    if first in _UNSUPPORTED:
        raise YamlError(line, _UNSUPPORTED[first], unsupported=first in "&*!|>")
    if first == "?" and text[start + 1:start + 2] in ("", " ", "\t"):
        raise _unsupported(line, "complex mapping keys (?) are not supported")


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
