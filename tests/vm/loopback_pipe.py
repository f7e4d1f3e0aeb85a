# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Join one guest connection (stdin/stdout) to a TCP port on the host's 127.0.0.1 (stdlib only).

QEMU's user-mode network runs this for every connection a guest opens to its ``guestfwd`` address
(``guestfwd=tcp:10.0.2.100:6443-cmd:python3 loopback_pipe.py PORT_FILE``, tests/vm/qemu.py
``--api-port-file``): the guest's kubelet reaches the test control plane, which listens on the host's
loopback only, and nothing else. The port is read from ``PORT_FILE`` at each connection, so a control
plane restarted on another port is found without redefining the guest.

    loopback_pipe.py PORT_FILE
"""

from __future__ import annotations

import os
import socket
import sys
import threading

CHUNK = 65536


def read_port(path: str) -> int:
    with open(path, encoding="ascii") as handle:
        port = int(handle.read().strip())
    if not 0 < port < 65536:
        raise ValueError("%s: not a TCP port: %d" % (path, port))
    return port


def copy_stdin_to(sock: socket.socket) -> None:
    """Guest -> host until the guest closes; then half-close towards the host."""
    try:
        while True:
            data = os.read(0, CHUNK)
            if not data:
                break
            sock.sendall(data)
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def copy_to_stdout(sock: socket.socket) -> None:
    """Host -> guest until the host closes."""
    try:
        while True:
            data = sock.recv(CHUNK)
            if not data:
                break
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]
    except OSError:
        pass


def main(argv: list) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: loopback_pipe.py PORT_FILE\n")
        return 2
    try:
        sock = socket.create_connection(("127.0.0.1", read_port(argv[1])), timeout=10)
    except (OSError, ValueError) as exc:
        sys.stderr.write("loopback_pipe: %s\n" % exc)
        return 1
    sock.settimeout(None)
    upstream = threading.Thread(target=copy_stdin_to, args=(sock,), daemon=True)
    upstream.start()
    copy_to_stdout(sock)
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
