# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Go ``encoding/json`` syntax and value semantics, as far as kubelet's checkpoint needs them.

Go decodes in two passes: a syntax check of the whole input (nothing is assigned when it
fails), then a typed decode that records the *first* type error, keeps going, and reports
that error at the end (Go's ``json.Unmarshal``, which kubelet's ``UnmarshalCheckpoint`` calls). :func:`parse_document` is the first pass and yields a
tree that keeps what Go's typed decode can see and Python's ``json`` would hide: repeated
keys in order (``JsonObject``), the literal text of numbers (``JsonNumber``), ``null``.
:class:`TypedDecoder` holds the helpers of the second pass (integer parsing, key folding).
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any, Iterable, Iterator, List, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.limits import (
    INT64_MAX as _MAX_INT64,
    INT64_MIN as _MIN_INT64,
    MAX_NESTING,
    UINT64_MAX as _MAX_UINT64,
    bounded_int,
    nesting_depth,
)

__all__ = [
    "GoJsonError",
    "JsonObject",
    "JsonNumber",
    "parse_document",
    "fold_key",
    "TypedDecoder",
    "go_json_kind",
    "marshal_string",
    "marshal_object",
]

UNEXPECTED_END = "unexpected end of JSON input"
_DECIMAL_INT = re.compile(r"^[+-]?[0-9]{1,20}$")  # longer literals are out of 64-bit range anyway
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class GoJsonError(ValueError):
    """What Go's decoder would return; ``str()`` is the error text kubelet wraps."""


class JsonObject(list):
    """A JSON object as the list of its ``(key, value)`` pairs, in file order, repeats kept."""

    def keys_in_order(self) -> List[str]:
        return [key for key, _value in self]


class JsonNumber(str):
    """A JSON number, kept as its literal text (Go parses it per target type)."""


def _replace_one_byte(error: UnicodeDecodeError) -> Tuple[str, int]:
    # Go's decoder turns each invalid UTF-8 byte into U+FFFD (utf8.DecodeRune width 1).
    return "\ufffd", error.start + 1


codecs.register_error("nodeops_go_utf8", _replace_one_byte)


def _reject_constant(name: str) -> None:
    raise GoJsonError("invalid character %r looking for beginning of value" % name[0])


def _go_string(text: str) -> str:
    # Go replaces an unpaired \uD800-\uDFFF escape with U+FFFD.
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def _object_pairs(pairs: List[Tuple[str, Any]]) -> JsonObject:
    return JsonObject((_go_string(key), _go_string(value) if isinstance(value, str) else value) for key, value in pairs)


def _describe_syntax_error(text: str, error: json.JSONDecodeError) -> str:
    if error.msg.startswith("Unterminated string") or error.pos >= len(text.rstrip(" \t\r\n")):
        return UNEXPECTED_END
    return "invalid JSON at line %d column %d: %s" % (error.lineno, error.colno, error.msg)


class _Decoder(json.JSONDecoder):
    def __init__(self) -> None:
        super().__init__(
            object_pairs_hook=_object_pairs,
            parse_int=JsonNumber,
            parse_float=JsonNumber,
            parse_constant=_reject_constant,
            strict=True,
        )


def parse_document(raw: bytes) -> Any:
    """First pass of Go's decoder: syntax of the whole input; returns the tree or raises.

    Invalid UTF-8 inside strings becomes U+FFFD per byte (as in Go); anywhere else it is
    a syntax error. Trailing data, comments, BOM, NaN and trailing commas are rejected.
    Nesting deeper than ``MAX_NESTING`` levels is refused here (Go allows 10,000; kubelet
    writes 7), so no later walk of the tree can recurse without bound.
    """
    text = raw.decode("utf-8", "nodeops_go_utf8")
    if not text.strip(" \t\r\n"):
        raise GoJsonError(UNEXPECTED_END)
    try:
        tree = _Decoder().decode(text)
    except json.JSONDecodeError as error:
        raise GoJsonError(_describe_syntax_error(text, error)) from None
    except RecursionError:
        tree = None
    else:
        if nesting_depth(tree) <= MAX_NESTING:
            return tree
    raise GoJsonError("JSON nesting is too deep: more than %d levels (no kubelet writes that; not followed)" % MAX_NESTING)


def go_json_kind(value: Any) -> str:
    """The JSON kind name Go uses in ``cannot unmarshal <kind> into ...`` errors, of this module's tree or of a value
    ``json.loads`` made (a dict, an int or a float)."""
    if value is None:
        return "null"
    if isinstance(value, (JsonObject, dict)):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (JsonNumber, int, float)):
        return "number"
    return "string"


def fold_key(key: str) -> str:
    """Go's field-name folding (Go's ``encoding/json`` ``foldName``): ASCII case, plus U+212A -> k and U+017F -> s."""
    return key.replace("\u212a", "k").replace("\u017f", "s").translate(_ASCII_LOWER)


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


class TypedDecoder:
    """Second pass: typed decoding state (the first type error wins, decoding goes on)."""

    def __init__(self) -> None:
        self.first_error: Optional[str] = None

    def type_error(self, value: Any, go_type: str, where: str) -> None:
        if self.first_error is None:
            kind = go_json_kind(value)
            shown = "number " + value if kind == "number" else kind
            self.first_error = "json: cannot unmarshal %s into Go %s of type %s" % (shown, where, go_type)

    def fields(self, obj: Any, known: Tuple[str, ...], go_type: str, where: str) -> Iterator[Tuple[str, Any]]:
        """Yield ``(json field name, value)`` for each key of ``obj`` that names a known field.

        Exact match first, then Go's case-insensitive fold; unknown keys are skipped.
        ``null`` for a whole struct is a no-op; any other non-object is a type error.
        """
        if obj is None:
            return
        if not isinstance(obj, JsonObject):
            self.type_error(obj, go_type, where)
            return
        folded = {fold_key(name): name for name in known}
        for key, value in obj:
            name = key if key in known else folded.get(fold_key(key))
            if name is not None:
                yield name, value

    def integer(self, value: Any, go_type: str, where: str, current: int = 0) -> int:
        """``int`` (signed 64-bit) or ``uint64``: decimal literal only; ``null`` keeps ``current``."""
        if value is None:
            return current
        if not isinstance(value, JsonNumber) or not _DECIMAL_INT.match(value.lstrip("0") or "0"):
            self.type_error(value, go_type, where)
            return current
        number = bounded_int(value.lstrip("-"))
        if number is None:
            self.type_error(value, go_type, where)
            return current
        number = -number if value.startswith("-") else number
        unsigned = go_type in ("uint64", "checksum.Checksum")
        in_range = 0 <= number <= _MAX_UINT64 if unsigned else _MIN_INT64 <= number <= _MAX_INT64
        if not in_range or (unsigned and value.startswith("-")):
            self.type_error(value, go_type, where)
            return current
        return number

    def string(self, value: Any, go_type: str, where: str, current: str = "") -> str:
        if value is None:
            return current
        if isinstance(value, str) and not isinstance(value, JsonNumber):
            return value
        self.type_error(value, go_type, where)
        return current

    def map_int_key(self, key: str, go_type: str) -> Optional[int]:
        """A ``map[int]`` key: ``strconv.ParseInt(key, 10, 64)`` (Go's ``encoding/json`` map decoding)."""
        if _DECIMAL_INT.match(key[:1] + key[1:].lstrip("0")):
            number = bounded_int(key.lstrip("+-"))
            number = None if number is None else -number if key.startswith("-") else number
            if number is not None and _MIN_INT64 <= number <= _MAX_INT64:
                return number
        if self.first_error is None:
            self.first_error = "json: cannot unmarshal number %s into Go value of type %s" % (key, go_type)
        return None


_GO_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_NEEDS_ESCAPE = re.compile('["\\\\<>&\u2028\u2029\x00-\x1f]')


def _escape(match: re.Match) -> str:
    char = match.group(0)
    return _GO_ESCAPES.get(char) or "\\u%04x" % ord(char)


def marshal_string(text: str) -> str:
    """A JSON string exactly as Go's ``json.Marshal`` writes it (HTML-safe escaping on, as in kubelet's ``MarshalCheckpoint``)."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def marshal_object(items: Iterable[Tuple[str, str]]) -> str:
    """A JSON object as Go's ``json.Marshal`` writes it: ``items`` are (key, value already marshalled), in the order
    given (a struct's tag order, or a map's keys sorted by the caller), no spaces."""
    return "{" + ",".join(marshal_string(key) + ":" + value for key, value in items) + "}"
