#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
module: numa_drift_metrics
short_description: Probe a node and write its NUMA drift metrics for node_exporter's textfile collector
version_added: 0.2.0
description:
  - Probes the node as M(nodeops.numa_drift.numa_drift_facts) does and writes C(<textfile_dir>/nodeops_numa_drift.prom)
    atomically (temporary file and rename) in the Prometheus text format, the same metrics the boot guard writes
    (C(nodeops_numa_drift_verdict), C(nodeops_numa_drift_memory_drift_bytes), C(nodeops_numa_drift_bound_bytes),
    C(nodeops_numa_drift_repairs_total), C(nodeops_numa_drift_last_run_timestamp_seconds)).
  - Never touches the checkpoint.
author:
  - nodeops.numa_drift contributors (@nodeops)
extends_documentation_fragment:
  - nodeops.numa_drift.node_options
attributes:
  check_mode:
    description: Probes, renders and returns the text without writing it.
    support: full
  diff_mode:
    description: Not supported.
    support: none
options:
  textfile_dir:
    description:
      - node_exporter's C(--collector.textfile.directory) on the node, under I(root).
    type: path
    default: /var/lib/node_exporter/textfile_collector
seealso:
  - module: nodeops.numa_drift.numa_drift_facts
"""

EXAMPLES = r"""
- name: Refresh the NUMA drift metrics
  nodeops.numa_drift.numa_drift_metrics:
    textfile_dir: /var/lib/node_exporter/textfile_collector
"""

RETURN = r"""
path:
  description: The metrics file written.
  returned: always
  type: str
  sample: /var/lib/node_exporter/textfile_collector/nodeops_numa_drift.prom
verdict:
  description: The probe's verdict.
  returned: always
  type: str
  sample: in_sync
metrics:
  description: The text written (or that would be written, in check mode).
  returned: always
  type: str
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import HostFiles
from ansible_collections.nodeops.numa_drift.plugins.module_utils._probe import probe
from ansible_collections.nodeops.numa_drift.plugins.module_utils._write.history import HistoryError, history_path, read_history
from ansible_collections.nodeops.numa_drift.plugins.module_utils._output.metrics import metrics_path, render_metrics, write_metrics
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.node_files import under_root
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.module_args import NODE_OPTIONS_SPEC, OptionError, probe_arguments
from ansible_collections.nodeops.numa_drift.plugins.module_utils._common.quantity import QuantityError

# The module's options (its action plugin checks their types on the controller first, in the collection's words).
ARGUMENT_SPEC = dict(NODE_OPTIONS_SPEC, textfile_dir=dict(type="path", default="/var/lib/node_exporter/textfile_collector"))


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    root = module.params["root"]
    textfile_dir = under_root(root, module.params["textfile_dir"])
    try:
        result = probe(HostFiles(module.params["root"]), **probe_arguments(module.params))
        history = read_history(history_path(root))
    except QuantityError as error:
        module.fail_json(msg="drift_bound: %s" % error)
    except OptionError as error:
        module.fail_json(msg=str(error))
    except (OSError, HistoryError) as error:
        module.fail_json(msg="cannot read the node under %s: %s" % (root, error))
    text = render_metrics(result.assessment, history, time.time())
    path = metrics_path(textfile_dir)
    if not module.check_mode:
        try:
            write_metrics(textfile_dir, text)
        except OSError as error:
            module.fail_json(msg="cannot write %s: %s" % (path, error))
    module.exit_json(changed=True, path=path, verdict=result.assessment.verdict, metrics=text)


if __name__ == "__main__":
    main()
