# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release a Go program's build stamped into it, read from its file without running it.

Kubernetes stamps its release with ``-X k8s.io/component-base/version.gitVersion=v1.34.4``; release binaries are
built with ``-trimpath -ldflags=-s -w`` (no ``-ldflags`` in the build info, no symbols). The linker's ``addstrdata``
(``cmd/link/internal/ld/data.go``) leaves the variable in ``.data`` as a Go string header (a pointer into
``.rodata``, then the length, each a machine word). :func:`stamped_release` answers the one release such headers
point at in a little-endian 64-bit ELF file, else None (unstamped ``v0.0.0-master+$Format:%H$``, a
position-independent build, a dependency's version beside kubelet's): the caller then runs the program, whose
``--version`` prints the same variable. Stdlib only, Python >= 3.9.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
import struct

TYPE_CHECKING = False  # the node reader imports no more than it runs: typing is for the annotations only
if TYPE_CHECKING:
    from typing import Dict, Optional, Set, Tuple

__all__ = ["stamped_release", "release_in_image"]

_ELF64_LITTLE_ENDIAN = b"\x7fELF\x02\x01"
_SECTION_HEADER = struct.Struct("<IIQQQQ")  # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size (Elf64_Shdr)
_PROGBITS = 1
MAX_SECTIONS = 1024
MAX_DATA_BYTES = 16 * 1024 * 1024  # kubelet's .data: 0.3 MiB
MAX_HEADERS = 64 * 1024  # string headers looked at (kubelet: about 3,800); beyond, the program is asked instead
# A string header's length word: a release is 6 to 64 bytes; the 7 high bytes of the little-endian word are zero.
_LENGTH_WORD = re.compile(rb"[\x06-\x40]\x00{7}")
_RELEASE = re.compile(rb"v\d{1,4}\.\d{1,4}\.\d{1,4}(?:[-+][0-9A-Za-z.+-]*)?\Z")


def _sections(image: bytes) -> Dict[bytes, Tuple[int, int, int]]:
    """``{name: (address, file offset, size)}`` of the image's PROGBITS sections."""
    offset, = struct.unpack_from("<Q", image, 0x28)  # e_shoff
    entry_size, count, names_index = struct.unpack_from("<HHH", image, 0x3A)  # e_shentsize, e_shnum, e_shstrndx
    if count > MAX_SECTIONS or entry_size < _SECTION_HEADER.size or names_index >= count:
        return {}
    headers = [_SECTION_HEADER.unpack_from(image, offset + index * entry_size) for index in range(count)]
    names_offset = headers[names_index][4]
    sections = {}
    for name, kind, _flags, address, where, size in headers:
        if kind == _PROGBITS and where + size <= len(image):
            start = names_offset + name
            sections[image[start:image.find(b"\0", start, start + 64)]] = (address, where, size)
    return sections


def release_in_image(image: bytes) -> Optional[str]:
    """The one release a Go ELF image (bytes or a read-only mmap) holds in a ``.data`` string variable, or None (not
    such an image, truncated or inconsistent, or not one release)."""
    if image[:6] != _ELF64_LITTLE_ENDIAN:
        return None
    try:
        found = _releases(image, _sections(image))
    except (ValueError, OverflowError, struct.error, IndexError):  # offsets beyond the file or past any integer
        return None
    return found.pop().decode("ascii") if len(found) == 1 else None


def _releases(image: bytes, sections: Dict[bytes, Tuple[int, int, int]]) -> Set[bytes]:
    """The distinct releases the string headers of ``.data`` point at in ``.rodata``."""
    if b".data" not in sections or b".rodata" not in sections or sections[b".data"][2] > MAX_DATA_BYTES:
        return set()
    _address, data_offset, data_size = sections[b".data"]
    rodata_address, rodata_offset, rodata_size = sections[b".rodata"]
    data = image[data_offset:data_offset + data_size]
    found = set()
    looked = 0
    for match in _LENGTH_WORD.finditer(data, 8):
        length_at = match.start()
        if length_at % 8:  # a header is word-aligned: its pointer is the word before
            continue
        looked += 1
        if looked > MAX_HEADERS:
            return set()
        pointer, = struct.unpack_from("<Q", data, length_at - 8)
        start, length = pointer - rodata_address, data[length_at]
        if 0 <= start and start + length <= rodata_size and image[rodata_offset + start] == 0x76:  # "v"
            value = image[rodata_offset + start:rodata_offset + start + length]
            if _RELEASE.match(value):
                found.add(value)
    return found


def stamped_release(path: str) -> Optional[str]:
    """The release stamped in the regular file at host ``path`` (:func:`release_in_image`), or None."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        with mmap.mmap(handle, 0, access=mmap.ACCESS_READ) as image:
            return release_in_image(image)
    except (OSError, ValueError):  # empty (mmap refuses a 0-byte file), or unreadable
        return None
    finally:
        os.close(handle)
