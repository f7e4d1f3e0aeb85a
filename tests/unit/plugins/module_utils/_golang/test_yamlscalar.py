# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests for plugins/module_utils/_golang/yamlscalar.py: go-yaml v2 scalars (plain, quoted, beyond 64 bits, keys), through the reader."""

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.goyaml import load
from ansible_collections.nodeops.numa_drift.plugins.module_utils._golang.yamlscalar import YamlError, resolve_plain


@pytest.mark.parametrize(
    "text, value",
    [
        # go-yaml v2 resolve.go: YAML 1.1 booleans, including y/n (PyYAML reads those as strings).
        ("y", True), ("Y", True), ("yes", True), ("On", True), ("TRUE", True),
        ("n", False), ("NO", False), ("off", False), ("False", False),
        ("~", None), ("null", None), ("NULL", None), ("", None),
        ("yES", "yES"), ("nil", "nil"), ("None", "None"),
        # strconv.ParseInt(s, 0, 64) after removing "_": octal with a leading 0, 0o, 0x, 0b.
        ("0777", 511), ("0o17", 15), ("0x1F", 31), ("-0x10", -16), ("0b101", 5), ("1_000", 1000), ("+5", 5),
        ("9223372036854775807", 2 ** 63 - 1), ("18446744073709551615", 2 ** 64 - 1),  # ParseUint
        # yamlStyleFloat, then JSON: an integral float is written without a fraction.
        ("08", 8), ("1e3", 1000), ("1.0", 1), ("1.5", 1.5), (".5", 0.5), ("-2.5e-1", -0.25),
        ("1e999", "1e999"),  # ParseFloat's range error: a string
        ("2001-12-14", "2001-12-14"),  # timestamps stay strings in interface{}
        ("0x", "0x"), ("1.2.3", "1.2.3"), ("-", "-"), ("_1", "_1"), ("1Gi", "1Gi"), ("500m", "500m"),
    ],
)
def test_plain_scalars_resolve_as_go_yaml_v2(text, value):
    resolved = resolve_plain(text)
    assert resolved == value and type(resolved) is type(value)


@pytest.mark.parametrize("text", ["18446744073709551616", "-9223372036854775809", "0x10000000000000000", "9" * 5000, "0" * 5000 + "7" * 23])
def test_integers_beyond_64_bits_are_refused_by_line(text):
    # go-yaml v2 would pass them on as a float (or a string), which no kubelet field takes: its
    # integers are at most uint64 and the memory manager needs every quantity as an int64.
    with pytest.raises(YamlError) as error:
        load("a: 1\nb: [%s]\n" % text)
    assert error.value.line == 2 and not error.value.unsupported
    assert "does not fit in 64 bits" in str(error.value) and len(str(error.value)) < 200


def test_leading_zeros_do_not_count_against_the_bound():
    assert load("a: %s7\n" % ("0" * 5000)) == {"a": 7}  # ParseInt(s, 0, 64): octal 07


@pytest.mark.parametrize("text", [".inf", "-.Inf", ".NaN", "+.INF"])
def test_nan_and_infinity_cannot_become_json(text):
    with pytest.raises(YamlError) as error:
        load("a: %s\n" % text)
    assert not error.value.unsupported and error.value.line == 1


def test_keys_become_strings_as_in_json():
    assert load("1: a\ntrue: b\nyes: c\n0x10: d\n'1': e\n") == {"1": "e", "true": "c", "16": "d"}


def test_quoted_scalars():
    text = r'''a: 'it''s # not a comment'
b: "tab\there \"q\" \\ \x41\u00e9\U0001F600 \/"
c: "" # empty
d: ''
e: "yes"
f: '0777'
'''
    assert load(text) == {"a": "it's # not a comment", "b": 'tab\there "q" \\ A\u00e9\U0001F600 /', "c": "", "d": "", "e": "yes", "f": "0777"}
