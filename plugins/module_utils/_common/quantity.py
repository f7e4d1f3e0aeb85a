# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes resource quantities <-> bytes (stdlib only, Python >= 3.9).

Implements the parts of k8s.io/apimachinery resource.Quantity that kubelet uses for
memory: binary suffixes (Ki..Ei), decimal suffixes (k..E, and m/u/n), exponents, and the
canonical binary form kubelet uses to name hugepage resources (``hugepages-2Mi``).
"""

from __future__ import annotations

import math
import re
from typing import Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.kinds import kind_of

__all__ = [
    "QuantityError",
    "parse_quantity",
    "format_binary_quantity",
    "hugepage_resource_name",
    "describe_bytes",
    "BINARY_SI",
    "DECIMAL_SI",
    "DECIMAL_EXPONENT",
    "ByteQuantity",
    "quantity_text",
    "quantity_format",
    "to_byte_quantity",
    "converts_to_int64",
    "parse_milli_quantity",
]

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"
INT64_MAX = 2 ** 63 - 1

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


# Beyond 10**±100 a quantity of at most 64 characters is 0 < value < 1 byte or more than 2**64
# bytes whatever its digits, so clamping the exponent keeps every result and bounds the work.
_EXPONENT_BOUND = 100


def _exact_value(match: re.Match) -> Tuple[int, int]:
    """The quantity as an exact fraction ``(numerator, denominator > 0)`` (no ``fractions``: cheaper to import)."""
    whole, _dot, decimals = match.group("number").partition(".")
    numerator, denominator = int(whole + decimals or "0"), 10 ** len(decimals)
    if match.group("binary"):
        numerator *= 1024 ** _BINARY_SUFFIXES[match.group("binary")]
    else:
        exponent = match.group("exponent")
        power = int(exponent) if exponent is not None else _DECIMAL_SUFFIXES[match.group("decimal")]
        power = max(-_EXPONENT_BOUND, min(_EXPONENT_BOUND, power))
        if power >= 0:
            numerator *= 10 ** power
        else:
            denominator *= 10 ** -power
    return (-numerator if match.group("sign") == "-" else numerator), denominator


def parse_quantity(value: object, allow_negative: bool = False) -> int:
    """Return the number of bytes a quantity (``"1Gi"``, ``"500M"``, ``4096``) stands for.

    Fractions of a byte round up, as ``resource.Quantity.Value()`` does.
    """
    if isinstance(value, bool):
        raise QuantityError("a quantity must be a number or a string, got a boolean")
    if isinstance(value, int):
        numerator, denominator = value, 1
    elif isinstance(value, str):
        match = _QUANTITY.match(value.strip())
        if not match or len(value) > 64:
            raise QuantityError("%r is not a Kubernetes quantity (examples: 1Gi, 128Mi, 64Ki, 500M, 4096)" % (value,))
        numerator, denominator = _exact_value(match)
    else:
        raise QuantityError("a quantity must be a number or a string, got %s" % kind_of(value))
    if numerator < 0 and not allow_negative:
        raise QuantityError("quantity %r is negative" % (value,))
    whole = -((-numerator) // denominator)  # ceiling
    if abs(whole) > _MAX_BYTES:
        raise QuantityError("quantity %r does not fit in 64 bits" % (value,))
    return whole


def parse_milli_quantity(value: object) -> int:
    """Thousandths of a quantity (``"500m"`` -> 500, ``"1.5"`` -> 1500), rounded up as ``Quantity.MilliValue()``:
    what kubelet reserves of ``cpu``."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise QuantityError("a cpu quantity must be a number or a string, got %s" % kind_of(value))
    return _milli_of_text(str(value))


def _milli_of_text(value: str) -> int:
    match = _QUANTITY.match(value.strip())
    if not match or len(value) > 64:
        raise QuantityError("%r is not a Kubernetes quantity (examples: 1, 500m, 1.5)" % (value,))
    numerator, denominator = _exact_value(match)
    if numerator < 0:
        raise QuantityError("quantity %r is negative" % (value,))
    milli = -((-numerator * 1000) // denominator)
    if milli > INT64_MAX:
        raise QuantityError("quantity %r does not fit in 64 bits" % (value,))
    return milli


def format_binary_quantity(num_bytes: int) -> str:
    """Canonical binary form: divide by 1024 while exact, at most 6 times (cadvisor's ``GetHugePagesInfo`` sizes, as kubelet names them)."""
    quotient, divisions = num_bytes, 0
    while quotient and quotient % 1024 == 0 and divisions < len(_BINARY_UNITS) - 1:
        quotient //= 1024
        divisions += 1
    return "%d%s" % (quotient, _BINARY_UNITS[divisions])


def hugepage_resource_name(page_size_kib: int) -> str:
    """Kubelet's resource name for a hugepage size directory ``hugepages-<K>kB`` (kubelet's ``HugePageResourceName``)."""
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


# --------------------------------------------------------------------------- kubelet's printing


class ByteQuantity(int):
    """Bytes plus the ``resource.Quantity`` format kubelet keeps for printing them.

    ``text``: the spelling it was parsed from, when one was (``converts_to_int64`` needs it).
    """

    format = DECIMAL_SI
    text: Optional[str] = None

    def __new__(cls, value: int, quantity_format: str = DECIMAL_SI) -> "ByteQuantity":
        self = super().__new__(cls, value)
        self.format = quantity_format
        return self

    def __repr__(self) -> str:
        return "ByteQuantity(%d, %r)" % (int(self), self.format)

    @property
    def kube_text(self) -> str:
        return quantity_text(int(self), self.format)


_SI_SUFFIXES = {0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def _decimal_mantissa(value: int) -> Tuple[int, int]:
    """``(mantissa, exponent)`` with exponent a multiple of 3 (``int64Amount.AsCanonicalBytes``)."""
    if value == 0:
        return 0, 0
    exponent = 0
    while value % 10 == 0:
        value //= 10
        exponent += 1
    while exponent % 3:
        value *= 10
        exponent -= 1
    return value, exponent


def quantity_text(value: int, quantity_format: str) -> str:
    """``resource.Quantity.String()`` for an integer number of bytes in a given format."""
    if quantity_format == BINARY_SI and abs(value) >= 1024:
        sign = "-" if value < 0 else ""
        return sign + format_binary_quantity(abs(value))
    mantissa, exponent = _decimal_mantissa(value)
    if quantity_format == DECIMAL_EXPONENT:
        return "%d%s" % (mantissa, "e%d" % exponent if exponent else "")
    # DecimalSI, and BinarySI below 1024 ("preserves the 1000 format for smaller numbers").
    if exponent in _SI_SUFFIXES:
        return "%d%s" % (mantissa, _SI_SUFFIXES[exponent])
    return "%d" % value


def quantity_format(value: object) -> str:
    """The format ``resource.ParseQuantity`` gives a valid quantity."""
    if not isinstance(value, str):
        return DECIMAL_SI  # a JSON/YAML number
    text = value.strip()
    if text.endswith("i"):
        return BINARY_SI
    if re.search(r"[eE][+-]?[0-9]+$", text):
        return DECIMAL_EXPONENT
    return DECIMAL_SI


def to_byte_quantity(value: object, what: str, allow_negative: bool = False) -> Tuple[Optional[ByteQuantity], Optional[str]]:
    """A quantity that fits kubelet's int64 (non-negative unless ``allow_negative``), or ``(None, problem)``."""
    if isinstance(value, float) and math.isfinite(value):
        value = repr(value)
    try:
        parsed = parse_quantity(value, allow_negative=allow_negative)
    except QuantityError as error:
        return None, "%s: %s" % (what, error)
    if not _fits_int64(parsed):
        return None, "%s: %r does not fit in a signed 64-bit integer (kubelet cannot use it)" % (what, value)
    quantity = ByteQuantity(parsed, quantity_format(value))
    quantity.text = value.strip() if isinstance(value, str) else str(value)
    return quantity, None


_INT64_MIN = -(2 ** 63)
_NANO_SCALE = -9


def _fits_int64(value: int) -> bool:
    return _INT64_MIN <= value <= INT64_MAX


def converts_to_int64(text: str) -> bool:
    """Whether ``resource.ParseQuantity(text).AsInt64()`` succeeds (apimachinery ``quantity.go``).

    ``ParseQuantity`` keeps a quantity as a scaled int64 only on its fast path; otherwise it
    becomes an ``inf.Dec`` and ``AsInt64`` fails. The fast path: binary suffixes without a
    fraction and with few enough digits (``precision = 15 - len(num) - exponent*3/10 - 1``),
    decimal ones with at most 18 digits and a scale of at least -9; a scaled int64 converts
    when its scale is 0 or positive without overflow. So ``1.5Gi``, ``1.0Gi``, ``100000Gi``,
    ``1Ei``, ``1000m`` and ``1.5`` fail, while ``1.5G``, ``1.Gi`` and ``1e9`` convert.
    ``text`` must be a valid quantity (:func:`parse_quantity`).
    """
    text = text.strip()
    if text == "0":
        return True
    match = _QUANTITY.match(text)
    if not match:
        return False
    whole, _dot, denom = match.group("number").partition(".")
    num = whole.lstrip("0") or "0"  # parseQuantityString strips leading zeros
    sign = -1 if match.group("sign") == "-" else 1
    binary = match.group("binary")
    if binary:
        exponent = 10 * _BINARY_SUFFIXES[binary]
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        return not denom and precision >= 0 and _fits_int64(sign * (int(num) << exponent))
    exponent_text = match.group("exponent")
    exponent = int(exponent_text) if exponent_text is not None else _DECIMAL_SUFFIXES[match.group("decimal")]
    scale = exponent - len(denom)
    if 18 - len(num) - len(denom) < 0 or scale < _NANO_SCALE or scale < 0:
        return False
    return _fits_int64(sign * int(num + denom) * 10 ** scale)
