# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small ELF images laid out as Go's linker lays out ``-X``-stamped string variables, for the stamp reader's tests.

``go_image(values)``: a 64-bit little-endian ELF file whose ``.rodata`` holds each value's bytes and whose ``.data``
holds, for each, a Go string header (the value's address, then its length, each a machine word), as
``cmd/link``'s ``addstrdata`` leaves a ``-X importpath.name=value`` variable. Options make the shapes a reader must
not trust: no pointer in the file (position-independent builds), another byte order or word size, a truncated file.
"""

from __future__ import annotations

import struct
from typing import Sequence

RODATA_ADDRESS = 0x2834000
DATA_ADDRESS = 0x53B1F40


def _section(name: int, kind: int, address: int, offset: int, size: int) -> bytes:
    return struct.pack("<IIQQQQIIQQ", name, kind, 0x2, address, offset, size, 0, 0, 16, 0)


def go_image(values: Sequence[str], relocated: bool = False, noise: int = 64, moved: int = 0) -> bytes:
    """An image whose ``.data`` holds a string header for each of ``values`` among ``noise`` other words (small
    integers and pointers to other strings, as real data has); ``relocated``: every pointer left zero in the file;
    ``moved``: every pointer that many bytes further than its value."""
    rodata = bytearray(b"kubelet\x00podsandbox\x00" * 4)
    addresses = []
    for value in values:
        addresses.append(RODATA_ADDRESS + len(rodata))
        rodata += value.encode("ascii") + b"\x00" * (8 - len(value) % 8)
    words = []
    for index in range(noise):  # lengths with no header, headers of other strings: what a reader must pass over
        words += [index % 9, RODATA_ADDRESS + (index % 4) * 8] if index % 2 else [RODATA_ADDRESS + index % 16, 7]
    for address, value in zip(addresses, values):
        words += [0 if relocated else (address + moved) % 2 ** 64, len(value), 0]
    data = struct.pack("<%dQ" % len(words), *words)
    names = b"\x00.rodata\x00.data\x00.shstrtab\x00"
    header_size, section_size = 64, 64
    rodata_offset = header_size
    data_offset = rodata_offset + len(rodata)
    names_offset = data_offset + len(data)
    sections_offset = names_offset + len(names) + (-(names_offset + len(names)) % 8)
    sections = (_section(0, 0, 0, 0, 0) + _section(1, 1, RODATA_ADDRESS, rodata_offset, len(rodata))
                + _section(9, 1, DATA_ADDRESS, data_offset, len(data)) + _section(15, 3, 0, names_offset, len(names)))
    header = (b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + struct.pack("<HHIQQQIHHHHHH", 2, 0x3E, 1, 0x401000, 0, sections_offset, 0,
                                                                 header_size, 0, 0, section_size, 4, 3))
    body = header + bytes(rodata) + data + names
    return body + b"\x00" * (sections_offset - len(body)) + sections
