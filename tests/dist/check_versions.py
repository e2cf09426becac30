#!/usr/bin/env python3
"""One version for every artifact a release publishes.

The version lives in one place, ``[workspace.package] version`` in the root Cargo.toml: the
crates inherit it, maturin gives it to the wheel. Everything else that names it by hand (the
npm packages, the platform packages' pins, the example servers and their dependency on
oxmcp, ``oxmcp.__version__``, the CHANGELOG's headings) is compared with
it here, and any drift fails ``make lint`` with one line per file.

    python3 tests/dist/check_versions.py [--root DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

# Keep a Changelog 1.1.0: the section names it allows, and how a release heading reads.
CHANGE_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
RELEASE_HEADING = re.compile(r"^## \[(Unreleased|\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\]( - \d{4}-\d{2}-\d{2})?$")


def check(root: Path) -> list[str]:
    problems: list[str] = []

    def expect(where: str, found: object, wanted: object) -> None:
        if found != wanted:
            problems.append(f"{where}: {found!r}, expected {wanted!r}")

    cargo = tomllib.loads((root / "Cargo.toml").read_text())
    version = cargo["workspace"]["package"]["version"]

    node_dir = root / "bindings-node"
    main = json.loads((node_dir / "package.json").read_text())
    expect("bindings-node/package.json version", main.get("version"), version)

    # Each committed platform folder is one package; the main package pins each exactly.
    platforms = sorted(p.name for p in (node_dir / "npm").iterdir() if (p / "package.json").exists())
    pins = main.get("optionalDependencies", {})
    expect(
        "bindings-node/package.json optionalDependencies",
        sorted(pins),
        [f"@oxmcp/{p}" for p in platforms],
    )
    for name, pin in sorted(pins.items()):
        expect(f"bindings-node/package.json optionalDependencies[{name}]", pin, version)
    expect("bindings-node/package.json napi.targets (count)", len(main["napi"]["targets"]), len(platforms))
    for triple in platforms:
        where = f"bindings-node/npm/{triple}/package.json"
        platform = json.loads((node_dir / "npm" / triple / "package.json").read_text())
        expect(f"{where} version", platform.get("version"), version)
        expect(f"{where} name", platform.get("name"), f"@oxmcp/{triple}")
        expect(f"{where} main", platform.get("main"), f"oxmcp.{triple}.node")
        # npm drops an optional package whose engines are stricter than the root's.
        expect(f"{where} engines", platform.get("engines"), main.get("engines"))

    weather_node = json.loads((root / "examples/node/weather-server/package.json").read_text())
    expect("examples/node/weather-server version", weather_node.get("version"), version)
    expect(
        "examples/node/weather-server dependency on oxmcp",
        weather_node.get("dependencies", {}).get("oxmcp"),
        version,
    )

    weather_py = tomllib.loads((root / "examples/python/weather-server/pyproject.toml").read_text())
    expect("examples/python/weather-server version", weather_py["project"].get("version"), version)
    expect(
        "examples/python/weather-server dependency on oxmcp",
        [d for d in weather_py["project"].get("dependencies", []) if d.startswith("oxmcp")],
        [f"oxmcp=={version}"],
    )

    init = (root / "bindings-python/python/oxmcp/__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]*)"$', init, re.M)
    expect("oxmcp.__version__", found and found.group(1), version)

    problems += check_changelog(root / "CHANGELOG.md", version)
    return problems


def check_changelog(path: Path, version: str) -> list[str]:
    problems = []
    releases = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("## "):
            heading = RELEASE_HEADING.match(line)
            if not heading:
                problems.append(f"CHANGELOG.md:{number}: not a Keep a Changelog heading: {line!r}")
                continue
            releases.append(heading.group(1))
            if heading.group(1) != "Unreleased" and not heading.group(2):
                problems.append(f"CHANGELOG.md:{number}: a release heading needs ' - YYYY-MM-DD'")
        elif line.startswith("### ") and line[4:].strip() not in CHANGE_KINDS:
            problems.append(f"CHANGELOG.md:{number}: {line[4:]!r} is not one of {sorted(CHANGE_KINDS)}")
    # The version being built is either released (its own heading) or still Unreleased.
    if version not in releases and "Unreleased" not in releases:
        problems.append(f"CHANGELOG.md: no '## [{version}]' or '## [Unreleased]' section")
    if releases and releases[0] != "Unreleased" and releases[0] != version:
        problems.append(f"CHANGELOG.md: the newest section is {releases[0]}, the version is {version}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    args = parser.parse_args()
    problems = check(args.root)
    for problem in problems:
        print(f"version drift: {problem}", file=sys.stderr)
    if problems:
        return 1
    print("versions: every artifact says the workspace version")
    return 0


if __name__ == "__main__":
    sys.exit(main())
