# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make this checkout importable as ``ansible_collections.nodeops.numa_drift`` for plain pytest.

ansible-test puts the collection on the path itself; plain ``pytest`` from the checkout
gets a symlinked ``ansible_collections/nodeops/numa_drift`` tree outside the repository
(a link inside the tree would fail ansible-test's ``symlinks`` sanity test).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile

_CHECKOUT = os.path.dirname(os.path.abspath(__file__))


def _collection_tree() -> str:
    key = hashlib.sha256(_CHECKOUT.encode()).hexdigest()[:12]
    base = os.path.join(tempfile.gettempdir(), "nodeops-numa-drift-%s" % key)
    link = os.path.join(base, "ansible_collections", "nodeops", "numa_drift")
    if os.path.realpath(link) != _CHECKOUT:
        os.makedirs(os.path.dirname(link), exist_ok=True)
        temporary = "%s.%d" % (link, os.getpid())  # atomic: concurrent pytest runs may race here
        os.symlink(_CHECKOUT, temporary)
        os.replace(temporary, link)
    return base


def _checkout_is_a_collection_path() -> bool:
    parts = _CHECKOUT.split(os.sep)
    return parts[-3:-2] == ["ansible_collections"] and parts[-2:] == ["nodeops", "numa_drift"]


if not _checkout_is_a_collection_path():
    sys.path.insert(0, _collection_tree())
