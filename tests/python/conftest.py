"""Shared fixtures: paths, and the `everything` server as a stdio child or an HTTP process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import oxmcp
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EVERYTHING = HERE / "servers" / "everything.py"
PY = sys.executable


def pytest_sessionstart(session: pytest.Session) -> None:
    # The point of these tests is the installed wheel, never the source tree.
    assert "bindings-python" not in (oxmcp.__file__ or ""), oxmcp.__file__


@pytest.fixture
async def client() -> AsyncIterator[oxmcp.Client]:
    async with oxmcp.Client.stdio(PY, [str(EVERYTHING)], name="pytest") as c:
        yield c


def start_http(script: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Starts an HTTP fixture and returns it with its URL (read from its stderr)."""
    proc = subprocess.Popen(
        [PY, str(script), "--http", *args],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("listening on "):
            return proc, line.split("listening on ", 1)[1].strip()
    proc.kill()
    raise RuntimeError(f"{script} never listened")


@pytest.fixture
def http_url() -> Iterator[str]:
    proc, url = start_http(EVERYTHING)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()
