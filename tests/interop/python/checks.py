"""What the SDK client scripts here share: the checks, the `ok:` lines, and the ending every
script has: `all checks passed`, or exit 1 with a MISMATCH line on stderr per difference found
(core/tests/interop reads both).
"""

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp_types import TextContent

# The SDK release these tests pin (tests/interop/python/requirements.txt).
PINNED_SDK = "2.3.0"


class Mismatch(Exception):
    """What the server sent differs from what the test expects."""


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise Mismatch(what)


def expect_eq(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise Mismatch(f"{what}: expected {expected!r}, got {actual!r}")


def ok(step: str) -> None:
    print(f"ok: {step}", flush=True)


def only_text(result: Any, what: str) -> str:
    """The single text block of a tool result."""
    expect_eq(len(result.content), 1, f"{what}: number of content blocks")
    block = result.content[0]
    expect(isinstance(block, TextContent), f"{what}: content is {block!r}, not text")
    return block.text


def mismatches(exc: BaseException) -> list[Mismatch]:
    """The mismatches inside an exception (anyio task groups wrap them in groups)."""
    if isinstance(exc, Mismatch):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        return [m for inner in exc.exceptions for m in mismatches(inner)]
    return []


def run_checks(checks: Callable[..., Awaitable[None]], *args: Any) -> int:
    """Runs `checks(*args)`; the script's exit status."""
    try:
        anyio.run(checks, *args)
    except Exception as e:
        found = mismatches(e)
        if not found:
            raise
        for m in found:
            print(f"MISMATCH: {m}", file=sys.stderr)
        return 1
    print("all checks passed", flush=True)
    return 0
