# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin for nodeops.numa_drift.kubelet_mm_checkpoint: the options' types checked on the controller, in the collection's
words, before the module runs on the node (Ansible's own check would say ``is of type str and we were unable to
convert to int``)."""

from __future__ import annotations

from ansible_collections.nodeops.numa_drift.plugins.modules.kubelet_mm_checkpoint import ARGUMENT_SPEC as MODULE_SPEC
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import TypedModuleAction


class ActionModule(TypedModuleAction):
    """Runs nodeops.numa_drift.kubelet_mm_checkpoint once its options are of their types."""

    ARGUMENT_SPEC = MODULE_SPEC
