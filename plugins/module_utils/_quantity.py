# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes resource quantities <-> bytes (stdlib only, Python >= 3.9).

Implements the parts of k8s.io/apimachinery resource.Quantity that kubelet uses for
memory: binary suffixes (Ki..Ei), decimal suffixes (k..E, and m/u/n), exponents, and the
canonical binary form kubelet uses to name hugepage resources (``hugepages-2Mi``).
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = [
    "QuantityError",
    "parse_quantity",
    "format_binary_quantity",
    "hugepage_resource_name",
    "describe_bytes",
]

_BINARY_SUFFIXES = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_QUANTITY = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))$"
)
_MAX_BYTES = 2 ** 64 - 1
_BINARY_UNITS = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


class QuantityError(ValueError):
    """A value is not a Kubernetes quantity of bytes."""


def _exact_value(match: re.Match) -> Fraction:
    number = Fraction(match.group("number"))
    if match.group("binary"):
        value = number * 1024 ** _BINARY_SUFFIXES[match.group("binary")]
    elif match.group("exponent") is not None:
        value = number * Fraction(10) ** int(match.group("exponent"))
    else:
        value = number * Fraction(10) ** _DECIMAL_SUFFIXES[match.group("decimal")]
    return -value if match.group("sign") == "-" else value


def parse_quantity(value: object, allow_negative: bool = False) -> int:
    """Return the number of bytes a quantity (``"1Gi"``, ``"500M"``, ``4096``) stands for.

    Fractions of a byte round up, as ``resource.Quantity.Value()`` does.
    """
    if isinstance(value, bool):
        raise QuantityError("a quantity must be a number or a string, got a boolean")
    if isinstance(value, int):
        exact = Fraction(value)
    elif isinstance(value, str):
        match = _QUANTITY.match(value.strip())
        if not match or len(value) > 64:
            raise QuantityError("%r is not a Kubernetes quantity (examples: 1Gi, 128Mi, 64Ki, 500M, 4096)" % (value,))
        exact = _exact_value(match)
    else:
        raise QuantityError("a quantity must be a number or a string, got %s" % type(value).__name__)
    if exact < 0 and not allow_negative:
        raise QuantityError("quantity %r is negative" % (value,))
    whole = -((-exact.numerator) // exact.denominator)  # ceiling
    if abs(whole) > _MAX_BYTES:
        raise QuantityError("quantity %r does not fit in 64 bits" % (value,))
    return whole


def format_binary_quantity(num_bytes: int) -> str:
    """Canonical binary form: divide by 1024 while exact, at most 6 times (spec 6.3)."""
    quotient, divisions = num_bytes, 0
    while quotient and quotient % 1024 == 0 and divisions < len(_BINARY_UNITS) - 1:
        quotient //= 1024
        divisions += 1
    return "%d%s" % (quotient, _BINARY_UNITS[divisions])


def hugepage_resource_name(page_size_kib: int) -> str:
    """Kubelet's resource name for a hugepage size directory ``hugepages-<K>kB`` (spec 6.3)."""
    return "hugepages-" + format_binary_quantity(page_size_kib * 1024)


def describe_bytes(num_bytes: int) -> str:
    """A short human form for summaries: ``41.7 MiB``, ``-12 KiB``, ``0 B``."""
    sign = "-" if num_bytes < 0 else ""
    magnitude = abs(num_bytes)
    for unit, power in (("GiB", 3), ("MiB", 2), ("KiB", 1)):
        if magnitude >= 1024 ** power:
            scaled = magnitude / 1024 ** power
            text = ("%.1f" % scaled).rstrip("0").rstrip(".")
            return "%s%s %s" % (sign, text, unit)
    return "%s%d B" % (sign, magnitude)
