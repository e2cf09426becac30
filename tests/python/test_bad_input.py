"""A Python server process against malformed input: every case of the shared corpus
``tests/fixtures/jsonrpc/malformed.json`` (the one ``core/tests/stdio_bad_input.rs`` replays
against the Rust servers) is written to the ``everything`` server's stdin, followed by a
``ping`` probe, and exactly the replies the case expects must come back: none for bytes that
are not JSON, one error with the right code and id for JSON that is not a valid request. The
server must survive all of it, write nothing but JSON-RPC to stdout, and exit with status 0
when stdin closes.

The corpus states each behaviour once; this file is only the Python runner for it, so a new
case reaches all three languages without being written again here."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from dataclasses import dataclass
from typing import IO, Any

from conftest import EVERYTHING, PY, REPO

CORPUS = REPO / "tests" / "fixtures" / "jsonrpc" / "malformed.json"
# Generous: only turns a hang into a failure. Nothing here is timed.
REPLY_TIMEOUT = 60.0
EXIT_TIMEOUT = 10.0


@dataclass
class Case:
    name: str
    line: bytes
    expect: dict[str, Any]
    in_flight: Any  # the id of a request that must be in flight, or None
    known_bug: str | None


def load_cases() -> list[Case]:
    doc = json.loads(CORPUS.read_text(encoding="utf-8"))
    cases = []
    for c in doc["cases"]:
        if "line" in c:
            line = c["line"].encode("utf-8")
        elif "hex" in c:
            line = bytes.fromhex(c["hex"])
        else:
            g = c["generate"]
            line = (g["prefix"] + g["repeat"] * g["times"] + g["suffix"]).encode("utf-8")
        assert b"\n" not in line, f"{c['name']}: a case is one line"
        cases.append(Case(c["name"], line, c["expect"], c.get("in_flight"), c.get("known_bug")))
    return cases


def meets(expect: dict[str, Any], replies: list[dict[str, Any]]) -> bool:
    """Whether ``replies`` are exactly what ``expect`` asks for. An expected id of null means
    the id could not be read: the reply carries null or (2025-11-25 on) no id at all."""
    if expect["reply"] == "none":
        return replies == []
    if len(replies) != 1:
        return False
    reply = replies[0]
    if expect["reply"] == "error":
        return (
            "result" not in reply
            and reply["error"]["code"] == expect["code"]
            and reply.get("id") == expect["id"]
        )
    return "result" in reply and reply.get("id") == expect["id"]


def check_response_shape(reply: dict[str, Any]) -> None:
    assert reply.get("jsonrpc") == "2.0", f"not a JSON-RPC 2.0 message: {reply}"
    has_result, has_error = "result" in reply, "error" in reply
    assert has_result != has_error, f"a reply needs exactly one of result and error: {reply}"
    if has_result:
        assert "id" in reply, f"a result without an id: {reply}"
    else:
        assert isinstance(reply["error"].get("code"), int), f"error code not an integer: {reply}"
        assert isinstance(reply["error"].get("message"), str), f"error message: {reply}"


class ServerProcess:
    """The server on pipes. Both output pipes are drained on threads all the time, so the
    server can never block on a full pipe whatever the test is doing."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._out = threading.Thread(target=self._read_lines, args=(self.proc.stdout,))
        self._err = threading.Thread(target=self._read_all, args=(self.proc.stderr,))
        self._out.start()
        self._err.start()

    def _read_lines(self, pipe: IO[bytes]) -> None:
        for line in pipe:
            self.lines.put(line)
        self.lines.put(None)

    def _read_all(self, pipe: IO[bytes]) -> None:
        for chunk in iter(lambda: pipe.read(65536), b""):
            self.stderr += chunk

    def send(self, line: bytes | dict[str, Any]) -> None:
        if isinstance(line, dict):
            line = json.dumps(line).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any] | None:
        """The next message, or None when none came in time or stdout ended."""
        try:
            line = self.lines.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            return None
        if line is None:
            return None
        # Nothing but newline-terminated JSON-RPC on stdout.
        assert line.endswith(b"\n"), f"stdout ended inside a line: {line[:200]!r}"
        try:
            value: dict[str, Any] = json.loads(line)
        except ValueError as e:
            raise AssertionError(f"stdout carried a non-JSON line ({e}): {line[:200]!r}") from e
        return value

    def close_pipes(self) -> None:
        """Closes our ends once the readers are done (the process has exited by now)."""
        self._out.join(timeout=EXIT_TIMEOUT)
        self._err.join(timeout=EXIT_TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None and not pipe.closed:
                pipe.close()

    def close_and_wait(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"no exit within {EXIT_TIMEOUT} s of stdin closing") from None
        self.close_pipes()
        assert code == 0, f"exit status {code}; stderr:\n{self.stderr.decode(errors='replace')}"
        late = []
        while (line := self.lines.get_nowait()) is not None:
            late.append(line)
        assert late == [], f"replies after the last probe: {late}"


def initialize(server: ServerProcess) -> None:
    # Id 0, which some cases refer to.
    server.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test_bad_input", "version": "0"},
            },
        }
    )
    reply = server.recv()
    assert reply is not None and reply["id"] == 0, reply
    assert reply["result"]["protocolVersion"] == "2025-11-25", reply
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def run_cases(server: ServerProcess, cases: list[Case]) -> None:
    failures: list[str] = []
    for n, case in enumerate(cases):
        if case.in_flight is not None:
            # A request that stays in flight until cancelled, so the case can reuse its id.
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": case.in_flight,
                    "method": "tools/call",
                    "params": {"name": "never_returns", "arguments": {}},
                }
            )
        server.send(case.line)
        if case.in_flight is not None:
            # Before the probe, so by the probe's answer the session has seen it: the slow
            # request then ends without a reply, as a cancelled request must.
            server.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": case.in_flight, "reason": "case done"},
                }
            )
        probe = f"probe-{n}"
        server.send({"jsonrpc": "2.0", "id": probe, "method": "ping"})
        # Replies to a line the session driver handles come before the probe's; replies from
        # a handler task may come after it, so wait for both.
        wanted = 0 if case.expect["reply"] == "none" else 1
        replies: list[dict[str, Any]] = []
        probed = False
        while not (probed and len(replies) >= wanted):
            reply = server.recv()
            if reply is None:
                break
            check_response_shape(reply)
            if reply.get("id") == probe:
                assert reply["result"] == {}, f"{case.name}: probe answered {reply}"
                probed = True
            else:
                replies.append(reply)
        if not probed:
            # Out of step from here on: stop at the first lost reply.
            failures.append(f"{case.name}: no reply to the probe; got {replies}")
            break
        ok = meets(case.expect, replies)
        if case.known_bug is None and not ok:
            failures.append(f"{case.name}: expected {case.expect}, got {replies}")
        elif case.known_bug is not None and ok:
            failures.append(f"{case.name}: now meets its expectation; remove `known_bug`")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)


def test_the_corpus_loads_and_covers_every_category() -> None:
    cases = load_cases()
    assert len(cases) >= 200, len(cases)
    assert len({c.name for c in cases}) == len(cases), "duplicate case names"
    assert any(c.in_flight is not None for c in cases)


def test_a_python_server_answers_bad_input_exactly_as_expected_and_survives() -> None:
    server = ServerProcess([PY, str(EVERYTHING)])
    try:
        initialize(server)
        run_cases(server, load_cases())
        assert server.proc.poll() is None, "the server exited under bad input"
        server.close_and_wait()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
        server.close_pipes()
    # Bad input is the peer's fault, not the handler's: no Python traceback for any of it.
    assert b"Traceback" not in server.stderr, server.stderr.decode(errors="replace")[-2000:]
