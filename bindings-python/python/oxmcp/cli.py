"""The ``oxmcp`` console script: the core's command (``oxmcp::cli``), the same code as the
Rust binary and the npm package's ``bin``, run through the native module.

``oxmcp tools --config mcp.json --format anthropic`` prints the tools as JSON on stdout;
everything for the human goes to stderr. See ``oxmcp --help`` for the exit codes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main", "run"]


def run(argv: Sequence[str]) -> int:
    """Runs ``oxmcp ARGV...`` in this process (GIL released) and returns the exit code.
    Ctrl-C stops it: the servers it started are shut down and 130 is returned."""
    from . import _native

    try:
        return _native.run_cli(list(argv))
    except KeyboardInterrupt:
        return 130


def main() -> None:
    """The console script's entry point."""
    sys.exit(run(sys.argv[1:]))


if __name__ == "__main__":
    main()
