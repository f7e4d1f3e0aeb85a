# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""go-spew ``%#v`` rendering and FNV-1a 32, as kubelet's checkpoint checksum uses them.

Kubelet hashes a checkpoint with ``hash.DeepHashObject``: FNV-1a 32 over go-spew v1.1.1's
``%#v`` rendering of a pointer to the checkpoint struct (kubelet's ``checksum.New`` through ``hashutil.DeepHashObject``). This module renders
a small reflective model of Go values (pointer, struct, map, slice, scalar) exactly as
go-spew's ``formatter`` does, including its ``ignoreNextType`` flag (go-spew v1.1.1 ``formatter.format``).
It knows nothing of kubelet's types; ``_checkpoint`` maps them onto this model.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.record import Record

__all__ = [
    "GoPtr",
    "GoStruct",
    "GoMap",
    "GoSlice",
    "GoScalar",
    "GoValue",
    "fnv1a_32",
    "spew_sharp_v",
    "deep_hash",
]

_FNV32_OFFSET_BASIS = 0x811C9DC5
_FNV32_PRIME = 0x01000193
_NIL = b"<nil>"


class GoScalar(Record, frozen=True):
    """An int, uint64 or string value; ``type_name`` as Go prints it (``uint64``, ``v1.ResourceName``)."""

    type_name: str
    value: Union[int, str]


class GoSlice(Record, frozen=True):
    type_name: str
    items: Optional[Sequence["GoValue"]]  # None = nil slice


class GoMap(Record, frozen=True):
    type_name: str
    entries: Optional[Sequence[Tuple[Union[int, str], "GoValue"]]]  # None = nil map


class GoStruct(Record, frozen=True):
    type_name: str
    fields: Sequence[Tuple[str, "GoValue"]]


class GoPtr(Record, frozen=True):
    """A pointer; ``type_name`` is the pointee's type (``state.MemoryTable``)."""

    type_name: str
    target: Optional["GoValue"]  # None = nil pointer


GoValue = Union[GoScalar, GoSlice, GoMap, GoStruct, GoPtr]


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bit (``hashutil.DeepHashObject`` with ``fnv.New32a``): xor each byte in, then multiply by the prime mod 2^32."""
    value = _FNV32_OFFSET_BASIS
    for byte in data:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def _map_key_order(key: Union[int, str]) -> Tuple[int, Union[int, bytes]]:
    # Rule 4: int keys numerically, string-kind keys byte-wise.
    if isinstance(key, int):
        return (0, key)
    return (1, key.encode("utf-8"))


class _Formatter:
    """go-spew's formatter for the ``%#v`` verb, reduced to the kinds kubelet's types use."""

    def __init__(self) -> None:
        self.out: List[bytes] = []
        self.ignore_next_type = False

    def write(self, text: Union[str, bytes]) -> None:
        self.out.append(text.encode("utf-8") if isinstance(text, str) else text)

    def format(self, value: GoValue) -> None:
        if isinstance(value, GoPtr):
            self.format_ptr(value)
            return
        if not self.ignore_next_type:
            self.write("(%s)" % value.type_name)
        self.ignore_next_type = False
        if isinstance(value, GoScalar):
            self.write(str(value.value))  # rule 9: decimal ints, raw strings without quotes
        elif isinstance(value, GoSlice):
            self.format_slice(value)
        elif isinstance(value, GoMap):
            self.format_map(value)
        else:
            self.format_struct(value)

    def format_ptr(self, value: GoPtr) -> None:
        if value.target is None and self.ignore_next_type:
            # Rule 11: returns early *without* clearing ignore_next_type.
            self.write(_NIL)
            return
        if not self.ignore_next_type:
            self.write("(*%s)" % value.type_name)
        else:
            self.write("<*>")  # rule 5
        if value.target is None:
            self.write(_NIL)
            return
        self.ignore_next_type = True
        self.format(value.target)

    def format_slice(self, value: GoSlice) -> None:
        if value.items is None:
            self.write(_NIL)  # rule 8
            return
        self.write("[")
        for index, item in enumerate(value.items):
            if index:
                self.write(" ")
            self.ignore_next_type = True
            self.format(item)
        self.write("]")

    def format_map(self, value: GoMap) -> None:
        if value.entries is None:
            self.write(_NIL)  # rule 8
            return
        self.write("map[")
        for index, (key, item) in enumerate(sorted(value.entries, key=lambda entry: _map_key_order(entry[0]))):
            if index:
                self.write(" ")
            self.ignore_next_type = True
            self.write(str(key))
            self.ignore_next_type = False  # formatting the key clears the flag
            self.write(":")
            self.ignore_next_type = True
            self.format(item)
        self.write("]")

    def format_struct(self, value: GoStruct) -> None:
        self.write("{")
        for index, (name, field) in enumerate(value.fields):
            if index:
                self.write(" ")
            self.write(name + ":")
            self.format(field)
        self.write("}")


def spew_sharp_v(value: GoValue) -> bytes:
    """The exact bytes of ``fmt.Fprintf(w, "%#v", value)`` under kubelet's go-spew config."""
    formatter = _Formatter()
    formatter.format(value)
    return b"".join(formatter.out)


def deep_hash(value: GoValue) -> int:
    """``hash.DeepHashObject`` + ``Sum32``: FNV-1a 32 of the ``%#v`` rendering."""
    return fnv1a_32(spew_sharp_v(value))
