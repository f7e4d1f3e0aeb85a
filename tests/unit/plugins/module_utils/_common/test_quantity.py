# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import pytest

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import (
    ByteQuantity,
    QuantityError,
    converts_to_int64,
    describe_bytes,
    format_binary_quantity,
    hugepage_resource_name,
    parse_quantity,
    quantity_text,
    to_byte_quantity,
)

MiB = 1024 * 1024
GiB = 1024 * MiB


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1Gi", 1073741824),
        ("128Mi", 134217728),
        ("64Ki", 65536),
        ("2048Ki", 2097152),
        ("1G", 1000000000),
        ("500M", 500000000),
        ("4096", 4096),
        (4096, 4096),
        ("1.5Gi", 1610612736),
        ("1e3", 1000),
        ("1E3", 1000),
        ("100k", 100000),
        ("0", 0),
        (" 1Ki ", 1024),
        ("1500m", 2),  # 1.5 bytes rounds up, as Quantity.Value()
        (".5Ki", 512),
        ("+8Mi", 8388608),
        ("1Ei", 2 ** 60),
    ],
)
def test_parse_quantity(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "Gi", "1GB", "1 Gi", "1gi", "0x10", "--1", "1.2.3", "abc", "1Gi1", None, [], 1.5, True])
def test_parse_quantity_rejects_garbage(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_negative_quantity_rejected_unless_allowed():
    with pytest.raises(QuantityError, match="negative"):
        parse_quantity("-1Mi")
    assert parse_quantity("-1Mi", allow_negative=True) == -1048576


def test_quantity_beyond_uint64_rejected():
    with pytest.raises(QuantityError, match="64 bits"):
        parse_quantity("16Ei")


@pytest.mark.parametrize(
    "num_bytes, expected",
    [(2097152, "2Mi"), (1073741824, "1Gi"), (65536, "64Ki"), (33554432, "32Mi"), (17179869184, "16Gi"),
     (1000, "1000"), (0, "0"), (1536, "1536"), (2 ** 70, "1024Ei")],
)
def test_format_binary_quantity(num_bytes, expected):
    assert format_binary_quantity(num_bytes) == expected


@pytest.mark.parametrize(
    "size_kib, name",
    [(2048, "hugepages-2Mi"), (1048576, "hugepages-1Gi"), (64, "hugepages-64Ki"), (32768, "hugepages-32Mi"),
     (16777216, "hugepages-16Gi")],
)
def test_hugepage_resource_name(size_kib, name):
    # spec 6.3 examples
    assert hugepage_resource_name(size_kib) == name


def test_format_round_trips_through_parse():
    for num_bytes in (1, 1023, 1024, 4096 * 10668, 2 ** 40, 3 * 2 ** 50):
        assert parse_quantity(format_binary_quantity(num_bytes)) == num_bytes


@pytest.mark.parametrize(
    "num_bytes, text",
    [(43696128, "41.7 MiB"), (-12288, "-12 KiB"), (0, "0 B"), (1023, "1023 B"), (3 * 2 ** 30, "3 GiB")],
)
def test_describe_bytes(num_bytes, text):
    assert describe_bytes(num_bytes) == text


@pytest.mark.parametrize(
    "text, expected",
    [("9" * 40 + "e-99999999999", 1), ("0e99999999999", 0), ("1e-100", 1), ("1e19", 10 ** 19), ("18e18", 18 * 10 ** 18)],
)
def test_huge_exponents_are_bounded_work(text, expected):
    # 10**99999999999 would never finish; the clamped exponent gives the same answer at once.
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["1e99999999999", "19e18", "0.0000001e99999"])
def test_huge_exponents_do_not_fit(text):
    with pytest.raises(QuantityError, match="does not fit in 64 bits"):
        parse_quantity(text)


# resource.ParseQuantity(text).AsInt64() of k8s.io/apimachinery v0.37.2 (and v0.34.4: the same code), run on
# each spelling: kubelet's convertReserved fails where it says False.
AS_INT64 = {
    "1Gi": True, "1.5Gi": False, "1.0Gi": False, "1.Gi": True, "0.5Gi": False, "100000Gi": False, "99999Gi": True,
    "1Ei": False, "7Ei": False, "1Pi": False, "1Ti": True, "10Ti": True, "100Ti": False, "12345678Mi": True,
    "123456789Mi": False, "12345678901Ki": True, "123456789012Ki": False, "007Gi": True, "0001Mi": True,
    "1000m": False, "1.5": False, "1.5G": True, "1.50G": True, "1e9": True, "1.5e3": True, "1.5555k": False,
    "1.5550k": False, ".5k": True, "0": True, "0.0": False, "00": True, "1024": True, "1E": True, "9E": True,
    "10E": False, "1.5E": True, "9.3e18": False, "1e18": True, "123456789012345678": True,
    "1234567890123456789": False, "+1Gi": True, "-1Gi": True, "1e-3": False, "1n": False, "1000000000n": False,
}


@pytest.mark.parametrize("text", sorted(AS_INT64))
def test_converts_to_int64_as_apimachinery_does(text):
    assert converts_to_int64(text) is AS_INT64[text]


def test_a_parsed_quantity_keeps_its_spelling():
    quantity, problem = to_byte_quantity(" 1.5Gi", "reservedMemory")
    assert problem is None and int(quantity) == 1536 * 1024 * 1024 and quantity.text == "1.5Gi"
    assert to_byte_quantity(2048, "x")[0].text == "2048"


@pytest.mark.parametrize(
    "value, quantity_format, text",
    [
        (GiB, "BinarySI", "1Gi"),
        (1124 * MiB, "BinarySI", "1124Mi"),
        (1500, "BinarySI", "1500"),
        (1000, "BinarySI", "1k"),  # |x| < 1024: printed as DecimalSI
        (0, "BinarySI", "0"),
        (10 ** 9, "DecimalSI", "1G"),
        (1500 * 10 ** 6, "DecimalSI", "1500M"),
        (GiB, "DecimalSI", "1073741824"),
        (10 ** 9, "DecimalExponent", "1e9"),
        (123, "DecimalExponent", "123"),
    ],
)
def test_quantity_text_matches_resource_quantity_string(value, quantity_format, text):
    assert quantity_text(value, quantity_format) == text
    assert ByteQuantity(value, quantity_format).kube_text == text


def test_byte_quantity_is_an_int():
    quantity = ByteQuantity(GiB, "BinarySI")
    assert quantity == GiB and {"memory": quantity} == {"memory": GiB}
    assert quantity + 1 == GiB + 1
    assert repr(quantity) == "ByteQuantity(1073741824, 'BinarySI')"
