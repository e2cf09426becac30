#!/usr/bin/env python3
"""A scale-out cluster behind one port, started like one server so `mcpload http` can drive it.

    cluster.py REPLICAS PORT            redis-server, REPLICAS oxmcp echo servers sharing it,
                                        and the round-robin proxy listening on PORT
    cluster.py 1 PORT --direct          one replica with the Redis store, listening on PORT
                                        itself (the store's cost without the proxy's)

Every child gets PR_SET_PDEATHSIG, so when the driver kills this process (SIGKILL, as it
does at the end of a run) Redis, the replicas and the proxy die with it: no orphan keeps a
port or a core for the next row.
"""

import ctypes
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = HERE / "target" / "release"
PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)


def die_with_parent() -> None:
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd: list) -> subprocess.Popen:
    return subprocess.Popen([str(c) for c in cmd], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent)


def announced(p: subprocess.Popen) -> int:
    """The port in the first `listening on http://127.0.0.1:PORT` line of its stderr."""
    assert p.stderr is not None
    for line in p.stderr:
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if m:
            return int(m.group(1))
    raise SystemExit(f"cluster: {p.args[0]} exited before listening")


def main() -> int:
    replicas, port = int(sys.argv[1]), int(sys.argv[2])
    direct = "--direct" in sys.argv
    children = []
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        redis_port = free_port()
        children.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent))
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", redis_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        store = f"redis://127.0.0.1:{redis_port}/"
        if direct:
            replica = start([BIN / "oxmcp_echo", "--http", port, "--json", "--store", store])
            children.append(replica)
            announced(replica)
        else:
            backends = []
            for _ in range(replicas):
                replica = start([BIN / "oxmcp_echo", "--http", 0, "--json", "--store", store])
                children.append(replica)
                backends.append(f"127.0.0.1:{announced(replica)}")
            proxy_args = [BIN / "rr_proxy", "--port", port]
            for b in backends:
                proxy_args += ["--backend", b]
            children.append(start(proxy_args))
        # Their logs are drained (the proxy logs every connection) so no child blocks or fails
        # writing to a full or closed pipe.
        for c in children:
            if c.stderr is not None:
                threading.Thread(target=c.stderr.read, daemon=True).start()
        while all(c.poll() is None for c in children):
            time.sleep(0.5)
        return 1
    finally:
        for c in children:
            c.kill()


if __name__ == "__main__":
    sys.exit(main())
