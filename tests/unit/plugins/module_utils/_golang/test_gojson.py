# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""_gojson: Go encoding/json syntax and value semantics (spec 4.5)."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.gojson import (
    UNEXPECTED_END,
    GoJsonError,
    JsonNumber,
    JsonObject,
    TypedDecoder,
    fold_key,
    go_json_kind,
    marshal_string,
    parse_document,
)


def test_repeated_keys_and_number_literals_are_kept():
    tree = parse_document(b'{"a": 1.50, "a": -0, "b": null}')
    assert isinstance(tree, JsonObject)
    assert tree.keys_in_order() == ["a", "a", "b"]
    assert tree[0][1] == "1.50" and isinstance(tree[0][1], JsonNumber)
    assert tree[1][1] == "-0" and tree[2][1] is None


@pytest.mark.parametrize("raw", [b"", b"  \n\t", b'{"a":', b'{"a": "unterminated'])
def test_empty_or_truncated_input_is_unexpected_end(raw):
    with pytest.raises(GoJsonError) as raised:
        parse_document(raw)
    assert str(raised.value) == UNEXPECTED_END


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf{}", b"{} x", b"[NaN]", b"[1,]", b"{/* c */}", b"[Infinity]", b"\xff{}"])
def test_what_go_rejects_is_a_syntax_error(raw):
    with pytest.raises(GoJsonError) as raised:
        parse_document(raw)
    assert str(raised.value) != UNEXPECTED_END


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(GoJsonError) as raised:
        parse_document(b"[" * 100000 + b"]" * 100000)
    assert "too deep" in str(raised.value)


def test_invalid_utf8_and_lone_surrogates_become_replacement_characters():
    assert parse_document(b'["\xff\xfeok"]') == ["\ufffd\ufffdok"]
    assert parse_document(b'{"\\ud800k": "\\udfff"}') == JsonObject([("\ufffdk", "\ufffd")])


@pytest.mark.parametrize("raw, kind", [
    (b"null", "null"), (b"{}", "object"), (b"[]", "array"), (b"true", "bool"), (b"12", "number"), (b'"s"', "string"),
])
def test_kinds_as_go_names_them(raw, kind):
    assert go_json_kind(parse_document(raw)) == kind


def test_key_folding():
    assert fold_key("PolicyName") == "policyname"
    assert fold_key("\u212aEY\u017f") == "keys"  # Kelvin sign and long s fold like Go's
    assert fold_key("\u00c9") == "\u00c9"  # non-ASCII letters are not folded


@pytest.mark.parametrize("literal, go_type, expected", [
    ("42", "int", 42),
    ("-9223372036854775808", "int", -(2 ** 63)),
    ("18446744073709551615", "uint64", 2 ** 64 - 1),
])
def test_integers_in_range(literal, go_type, expected):
    decoder = TypedDecoder()
    assert decoder.integer(JsonNumber(literal), go_type, "value") == expected
    assert decoder.first_error is None


@pytest.mark.parametrize("literal, go_type", [
    ("9223372036854775808", "int"), ("18446744073709551616", "uint64"), ("-1", "uint64"), ("1.5", "int"), ("1e3", "int"),
])
def test_integers_out_of_range_or_not_integers_are_type_errors(literal, go_type):
    decoder = TypedDecoder()
    assert decoder.integer(JsonNumber(literal), go_type, "struct field S.n", current=7) == 7
    assert decoder.first_error == "json: cannot unmarshal number %s into Go struct field S.n of type %s" % (literal, go_type)


def test_the_first_type_error_wins_and_null_keeps_the_value():
    decoder = TypedDecoder()
    assert decoder.integer(None, "int", "value", current=3) == 3
    assert decoder.string(JsonNumber("1"), "string", "struct field S.a") == ""
    decoder.integer("text", "int", "struct field S.b")
    assert decoder.first_error == "json: cannot unmarshal number 1 into Go struct field S.a of type string"
    assert TypedDecoder().string("ok", "string", "x") == "ok"


def test_fields_match_exactly_then_folded_and_skip_unknown_keys():
    decoder = TypedDecoder()
    obj = parse_document(b'{"POLICYNAME": "a", "unknown": 1, "policyName": "b"}')
    assert list(decoder.fields(obj, ("policyName",), "T", "value")) == [("policyName", "a"), ("policyName", "b")]
    assert list(decoder.fields(None, ("x",), "T", "value")) == []
    assert list(decoder.fields(["not", "an", "object"], ("x",), "state.T", "value")) == []
    assert decoder.first_error == "json: cannot unmarshal array into Go value of type state.T"


def test_map_int_keys():
    decoder = TypedDecoder()
    assert decoder.map_int_key("12", "map[int]T") == 12
    assert decoder.map_int_key("-3", "map[int]T") == -3
    assert decoder.first_error is None
    assert decoder.map_int_key("9223372036854775808", "map[int]T") is None
    assert decoder.first_error == "json: cannot unmarshal number 9223372036854775808 into Go value of type map[int]T"
    assert TypedDecoder().map_int_key("x", "map[int]T") is None


def test_marshal_string_escapes_like_go():
    assert marshal_string('a"b\\c') == '"a\\"b\\\\c"'
    assert marshal_string("<a&b>") == '"\\u003ca\\u0026b\\u003e"'
    assert marshal_string("\n\t\x01\u2028\u2029") == '"\\n\\t\\u0001\\u2028\\u2029"'
    assert marshal_string("\u00e9") == '"\u00e9"'
