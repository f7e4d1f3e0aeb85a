# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rollout controls of the remediate playbook, as pure functions (controller side).

- the cluster-wide lock: a coordination.k8s.io/v1 Lease, as client-go's leader election uses it
  (holderIdentity, leaseDurationSeconds, renewTime; a lease whose renewTime + duration passed is free);
- pause: a key of a ConfigMap;
- the health gate: NotReady Nodes this rollout is not about, and firing Prometheus alerts;
- the maintenance window: days and hours in a time zone.
"""

from __future__ import annotations

import calendar
import datetime
import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
TRUE_WORDS = ("true", "yes", "1", "on", "paused")


# --------------------------------------------------------------------------- the lease


def micro_time(now: float) -> str:
    """metav1.MicroTime as the API server writes it."""
    return datetime.datetime.fromtimestamp(now, tz=datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: Optional[str]) -> Optional[float]:
    if not text:
        return None
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z$", str(text))
    if not match:
        return None
    whole = calendar.timegm(datetime.datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").timetuple())
    return whole + (float(match.group(2)) if match.group(2) else 0.0)


def lease_expires(lease: Mapping[str, Any]) -> Optional[float]:
    spec = lease.get("spec") or {}
    renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
    if renewed is None:
        return None
    return renewed + float(spec.get("leaseDurationSeconds") or 0)


def lease_decision(lease: Optional[Mapping[str, Any]], holder: str, now: float) -> Tuple[str, str]:
    """("create" | "renew" | "take" | "wait", why) for ``holder`` looking at ``lease``."""
    if lease is None:
        return "create", "no lease yet"
    spec = lease.get("spec") or {}
    current = spec.get("holderIdentity") or ""
    if current == holder:
        return "renew", "held by this run"
    if not current:
        return "take", "released"
    expires = lease_expires(lease)
    if expires is None or expires <= now:
        return "take", "stale: %s did not renew it since %s" % (current, spec.get("renewTime") or spec.get("acquireTime") or "?")
    return "wait", "held by %s until %s unless renewed" % (current, micro_time(expires))


def lease_body(lease: Optional[Mapping[str, Any]], name: str, namespace: str, holder: str, duration: int, now: float,
               release: bool = False) -> Dict[str, Any]:
    """The Lease to write (create when ``lease`` is None; else a replace carrying its resourceVersion)."""
    spec = dict((lease or {}).get("spec") or {})
    taking = spec.get("holderIdentity") != holder
    if release:
        spec.update(holderIdentity=None, renewTime=micro_time(now), leaseDurationSeconds=1)
    else:
        spec.update(holderIdentity=holder, leaseDurationSeconds=int(duration), renewTime=micro_time(now))
        if taking:
            spec["acquireTime"] = micro_time(now)
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if lease is not None else 0)
    metadata: Dict[str, Any] = {"name": name, "namespace": namespace}
    if lease is not None:
        metadata["resourceVersion"] = (lease.get("metadata") or {}).get("resourceVersion")
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}


# --------------------------------------------------------------------------- pause


def paused(configmap: Optional[Mapping[str, Any]], key: str) -> Optional[str]:
    """The pause reason when the ConfigMap's ``key`` says paused (true/yes/1/on, or any other text as the reason)."""
    if not configmap:
        return None
    value = str((configmap.get("data") or {}).get(key) or "").strip()
    if not value or value.lower() in ("false", "no", "0", "off"):
        return None
    return "paused" if value.lower() in TRUE_WORDS else "paused: %s" % value


# --------------------------------------------------------------------------- health gate


def threshold(limit: Any, total: int) -> Tuple[int, str]:
    """``numa_drift_max_unhealthy`` as a node count: ``3`` or ``"10%"`` (of every Node in the cluster)."""
    text = str(limit).strip()
    if text.endswith("%"):
        return int(float(text[:-1]) * total / 100.0), "%s of %d Nodes" % (text, total)
    return int(text), text


def not_ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def unhealthy_others(nodes: Iterable[Mapping[str, Any]], ours: Sequence[str], prefix: str) -> List[str]:
    """NotReady Nodes this rollout is not about: not one of its targets, not cordoned by this collection."""
    found = []
    for node in nodes:
        meta = node.get("metadata") or {}
        marked = (meta.get("annotations") or {}).get(prefix + "/cordoned-by") == "nodeops.numa_drift"
        if not_ready(node) and meta.get("name") not in ours and not marked:
            found.append(str(meta.get("name")))
    return sorted(found)


def firing_alerts(document: Mapping[str, Any], pattern: str) -> List[str]:
    """Names of firing alerts (Prometheus GET /api/v1/alerts) whose alertname matches ``pattern``."""
    regexp = re.compile(pattern)
    alerts = ((document.get("data") or {}).get("alerts")) or []
    return sorted({str((a.get("labels") or {}).get("alertname")) for a in alerts
                   if a.get("state") == "firing" and regexp.search(str((a.get("labels") or {}).get("alertname") or ""))})


# --------------------------------------------------------------------------- maintenance window


def parse_hours(text: Optional[str]) -> Optional[Tuple[int, int]]:
    """``"22:00-06:00"`` -> minutes since midnight (start, end); None = all day."""
    if not text:
        return None
    match = re.match(r"^\s*(\d{1,2}):(\d\d)\s*-\s*(\d{1,2}):(\d\d)\s*$", str(text))
    if not match:
        raise ValueError("numa_drift_window_hours must look like 22:00-06:00, not %r" % text)
    start, end = int(match.group(1)) * 60 + int(match.group(2)), int(match.group(3)) * 60 + int(match.group(4))
    if start >= 24 * 60 or end > 24 * 60:
        raise ValueError("numa_drift_window_hours: hours run from 00:00 to 24:00: %r" % text)
    return start, end


def parse_days(days: Optional[Sequence[str]]) -> Tuple[int, ...]:
    if not days:
        return tuple(range(7))
    found = []
    for day in days:
        key = str(day).strip().lower()[:3]
        if key not in DAYS:
            raise ValueError("numa_drift_window_days: unknown day %r (use mon, tue, ... sun)" % day)
        found.append(DAYS.index(key))
    return tuple(sorted(set(found)))


def _zone(name: str) -> datetime.tzinfo:
    if name.upper() in ("UTC", "Z"):
        return datetime.timezone.utc
    from zoneinfo import ZoneInfo  # pylint: disable=import-outside-toplevel  # Python 3.9+ on the controller

    return ZoneInfo(name)


def window_state(now: float, days: Optional[Sequence[str]], hours: Optional[str], zone: str = "UTC") -> Dict[str, Any]:
    """Whether ``now`` is inside the window, and when it opens next (a window crossing midnight belongs to the day it starts)."""
    tz = _zone(zone)
    allowed, span = parse_days(days), parse_hours(hours)
    local = datetime.datetime.fromtimestamp(now, tz=tz)
    if span is None:
        span = (0, 24 * 60)
    start, end = span
    length = (end - start) if end > start else (24 * 60 - start + end)
    for offset in range(-1, 8):
        day = (local + datetime.timedelta(days=offset)).replace(hour=0, minute=0, second=0, microsecond=0)
        if day.weekday() not in allowed:
            continue
        opens = day + datetime.timedelta(minutes=start)
        closes = opens + datetime.timedelta(minutes=length)
        if opens <= local < closes:
            return {"open": True, "closes": closes.isoformat(), "opens": opens.isoformat()}
        if opens > local:
            return {"open": False, "opens": opens.isoformat(), "closes": closes.isoformat()}
    return {"open": False, "opens": None, "closes": None}
