"""The `oxmcp` console script the wheel installs: the core's CLI through the native module.
JSON on stdout, the human's messages on stderr, exit codes a shell can act on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WEATHER_SRC = REPO / "examples" / "python" / "weather-server" / "src"
WEATHER = {
    "command": sys.executable,
    "args": [
        "-c",
        f"import sys; sys.path.insert(0, {str(WEATHER_SRC)!r}); import oxmcp_weather; "
        "oxmcp_weather.main()",
    ],
}
OXMCP = Path(sys.executable).parent / "oxmcp"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(OXMCP), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def write(tmp_path: Path, servers: dict[str, Any]) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_the_console_script_is_installed_and_prints_its_help() -> None:
    assert OXMCP.exists(), "the wheel installs an `oxmcp` console script"
    out = run("--help")
    assert out.returncode == 0
    assert "EXIT CODES" in out.stdout + out.stderr


def test_tools_prints_provider_json_and_names_a_failed_server(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"weather": WEATHER, "gone": {"command": "/nonexistent/mcp-server"}})
    out = run("tools", "--config", str(cfg), "--format", "anthropic")
    tools = json.loads(out.stdout)  # stdout is only JSON, even with a server down
    assert [t["name"] for t in tools] == ["weather__get_weather"]
    assert "input_schema" in tools[0]
    assert "gone" in out.stderr
    assert out.returncode == 4


def test_call_prints_the_result(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"weather": WEATHER})
    out = run("call", "--config", str(cfg), "weather", "get_weather", '{"city":"Beijing"}')
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["structuredContent"]["city"] == "Beijing"
    failed = run("call", "--config", str(cfg), "weather", "get_weather", '{"city":"Atlantis"}')
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["isError"] is True


def test_bad_input_gets_exit_codes_and_messages(tmp_path: Path) -> None:
    cfg = write(tmp_path, {"weather": WEATHER})
    bad_args = run("call", "--config", str(cfg), "weather", "get_weather", "{city")
    assert bad_args.returncode == 2 and "not valid JSON" in bad_args.stderr
    assert bad_args.stdout == ""
    assert run("frobnicate").returncode == 2
    assert run("tools", "--format", "palm", "--config", str(cfg)).returncode == 2
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {"w": {"args": []}}}')
    out = run("tools", "--config", str(broken))
    assert out.returncode == 3
    assert "`w`" in out.stderr or "w" in out.stderr
    assert "command" in out.stderr


def test_ctrl_c_ends_the_command_and_its_servers(tmp_path: Path) -> None:
    # A server that never answers the handshake; the CLI waits for it (60 s timeout). The
    # marker in its command line finds it in /proc afterwards.
    marker = f"oxmcp-ctrl-c-{os.getpid()}"
    silent = {
        "command": sys.executable,
        "args": ["-c", f"import time; time.sleep(120)  # {marker}"],
    }
    cfg = write(tmp_path, {"silent": silent})
    proc = subprocess.Popen(
        [str(OXMCP), "tools", "--config", str(cfg), "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ},
        # A test run started in the background (`make test &`) inherits SIGINT ignored, and
        # an ignored signal stays ignored across exec: give the CLI Ctrl-C back.
        preexec_fn=_default_sigint,
    )
    for _ in range(100):  # wait until the server runs (so the check below can fail)
        if _running(marker):
            break
        time.sleep(0.1)
    assert _running(marker), "the CLI never started the server"
    time.sleep(0.3)  # into the handshake wait; not an assertion on timing
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        # Reaped here whatever happened, so a failure does not leak into the next test as
        # "subprocess still running".
        proc.kill()
        proc.communicate()
    assert proc.returncode == 130, err
    # The server it started is gone too (no orphan left sleeping); it may take a moment to be
    # reaped by init, so look a few times.
    for _ in range(50):
        if not _running(marker):
            break
        time.sleep(0.2)
    assert not _running(marker), "the server outlived the CLI"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _running(marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            return True
    return False
