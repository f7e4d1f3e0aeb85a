# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Open a local HTML file in real headless Chromium and look at it through the DevTools protocol.

Chromium runs with ``--remote-debugging-pipe`` (DevTools messages, NUL-terminated JSON, on file
descriptors 3 and 4: no port, no network), loads the page, and the caller gets what the console
said (``console.error`` and friends, uncaught exceptions, browser log entries) and the value of
JavaScript expressions evaluated in the loaded page (computed layout, styles, DOM).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
# Keep the browser from talking to anything: no updates, no sync, no metrics, no DNS prefetch.
QUIET_FLAGS = (
    "--headless=new", "--disable-gpu", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--disable-default-apps", "--metrics-recording-only", "--mute-audio", "--disable-features=Translate,MediaRouter",
    "--window-size=1600,1200",
)


def find_chromium() -> Optional[str]:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(Exception):
    pass


class Page:
    """One Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, chromium: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="numa-drift-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child's ends above 4, so that moving them to 3 and 4 cannot close one another.
        to_browser_r, from_browser_w = (self._above(to_browser_r), self._above(from_browser_w))
        # Chromium reads commands on its fd 3 and writes replies on fd 4: bash moves our pipe ends there, then execs it.
        redirect = 'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-' % (to_browser_r, from_browser_w, to_browser_r, from_browser_w)
        self.stderr = tempfile.TemporaryFile()  # pylint: disable=consider-using-with
        self.process = subprocess.Popen(  # pylint: disable=consider-using-with
            ["bash", "-c", redirect, chromium, *QUIET_FLAGS, "--remote-debugging-pipe", "--user-data-dir=" + self.profile,
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr, pass_fds=(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: List[Dict[str, Any]] = []
        self.session = ""
        target = next(t for t in self.command("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.command("Target.attachToTarget", targetId=target["targetId"], flatten=True, session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.command(domain + ".enable")

    @staticmethod
    def _above(fd: int, lowest: int = 10) -> int:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD, lowest)
        os.close(fd)
        return moved

    # -- the pipe

    def _send(self, message: Dict[str, Any]) -> None:
        os.write(self._to_browser, json.dumps(message).encode("utf-8") + b"\0")

    def _receive(self, deadline: float) -> Dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("no answer from Chromium in %.0f s" % self.timeout)
            ready = select.select([self._from_browser], [], [], left)[0]
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise BrowserError("Chromium closed the DevTools pipe (exit %s)" % self.process.poll())
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message.decode("utf-8"))

    def command(self, method: str, session: bool = True, **params: Any) -> Dict[str, Any]:
        self._next_id += 1
        message: Dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self.session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError("%s: %s" % (method, reply["error"]))
                return reply.get("result") or {}
            if "method" in reply:
                self.events.append(reply)

    def wait_for_event(self, method: str) -> Dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        seen = len(self.events)
        while True:
            for event in self.events[seen:]:
                if event["method"] == method:
                    return event
            seen = len(self.events)
            message = self._receive(deadline)
            if "method" in message:
                self.events.append(message)

    # -- what tests use

    def open(self, path: str) -> None:
        self.command("Page.navigate", url="file://" + os.path.abspath(path))
        self.wait_for_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.command("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError("the expression threw: %s" % json.dumps(result["exceptionDetails"])[:2000])
        return result["result"].get("value")

    def console_problems(self) -> List[str]:
        """Console errors and warnings, uncaught exceptions and browser log errors, as text."""
        problems = []
        for event in self.events:
            params = event.get("params") or {}
            if event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                problems.append("console.%s: %s" % (params["type"], " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args") or [])))
            elif event["method"] == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails") or {}
                problems.append("exception: %s" % ((details.get("exception") or {}).get("description") or details.get("text")))
            elif event["method"] == "Log.entryAdded" and (params.get("entry") or {}).get("level") in ("error", "warning"):
                entry = params["entry"]
                problems.append("log %s (%s): %s %s" % (entry["level"], entry.get("source"), entry.get("text"), entry.get("url", "")))
        return problems

    def close(self) -> None:
        try:
            self.command("Browser.close", session=False)
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.stderr.close()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


@contextlib.contextmanager
def opened(chromium: str, path: str) -> Iterator[Page]:
    """``path`` loaded in a fresh headless Chromium; closed (and its profile removed) afterwards."""
    page = Page(chromium)
    try:
        page.open(path)
        yield page
    finally:
        page.close()


# The fleet report's layout as the browser computed it: one entry per drift bar, the tables, the details.
REPORT_LAYOUT = r"""
(() => {
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width, height: r.height}; };
  const bars = [...document.querySelectorAll('#nodes tr[id] .bar')].map((bar) => {
    const fill = bar.querySelector('.fill');
    return {
      node: bar.closest('tr[id]').id, numa: Number(bar.dataset.numaNode), resource: bar.dataset.resource,
      delta: bar.dataset.delta === '' ? null : Number(bar.dataset.delta), side: bar.dataset.side, over: bar.dataset.over === 'true',
      track: box(bar.querySelector('.track')), axis: box(bar.querySelector('.axis')), fill: box(fill),
      fill_color: fill ? getComputedStyle(fill).backgroundColor : null,
      bounds: [...bar.querySelectorAll('.bound')].map(box),
      value: bar.querySelector('.value').textContent.trim(),
      visible: bar.offsetParent !== null,
    };
  });
  const rows = [...document.querySelectorAll('#nodes tr[id]')].map((tr) => {
    const details = tr.querySelector('details');
    return {
      node: tr.id, action: tr.dataset.action, text: tr.textContent,
      summary: details ? details.querySelector('summary').textContent.trim() : null, open: details ? details.open : null,
      details_height: details ? box(details).height : null,
      todo: [...tr.querySelectorAll('[data-field="what-to-do"]')].map((e) => e.textContent.trim()),
      todo_above: [...tr.querySelectorAll('[data-field="what-to-do-above"]')].map((e) => e.textContent.trim()),
      action_note: (tr.querySelector('[data-field="action-note"]') || {}).textContent || null,
      guard: (tr.querySelector('[data-field="guard"]') || {}).textContent,
      distribution: (tr.querySelector('[data-field="distribution"]') || {}).textContent,
      kubelet: (tr.querySelector('[data-field="kubelet-release"]') || {}).textContent,
      kubelet_title: (tr.querySelector('[data-field="kubelet-release"]') || {title: null}).title,
    };
  });
  const pods = [...document.querySelectorAll('#pods tr[data-uid]')].map((tr) => ({
    node: tr.closest('tbody').id.replace(/^pods-/, ''), uid: tr.dataset.uid, text: tr.textContent,
  }));
  // What now: the box at the top (nodes that need a human; the repairable ones and the remediate command).
  const whatNow = document.querySelector('#what-now');
  const now = {
    first: whatNow !== null && whatNow === document.querySelector('body > h1 ~ div, body > h1 ~ h2, body > h1 ~ table'),
    needs_human: [...document.querySelectorAll('#needs-human tr[data-node]')].map((tr) => ({
      node: tr.dataset.node, text: tr.textContent, next_step: tr.querySelector('[data-field="next-step"]').textContent.trim(),
    })),
    repairable: (document.querySelector('#repairable') || {}).textContent || null,
    none: document.querySelector('#needs-human-none') !== null,
  };
  return {
    title: document.title, tables: [...document.querySelectorAll('table[id]')].map((t) => t.id),
    bars, rows, pods, now, body: document.body.innerText,
  };
})()
"""


def open_details(page: Page) -> Any:
    """Open every <details> (as a reader clicking each line would) and return how tall each became."""
    return page.evaluate(
        "[...document.querySelectorAll('#nodes details')].map((d) => { const before = d.getBoundingClientRect().height;"
        " d.open = true; return {node: d.closest('tr[id]').id, before: before, after: d.getBoundingClientRect().height,"
        " text: d.innerText}; })")
