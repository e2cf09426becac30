"""check_versions.py passes on the tree as committed and names each kind of drift."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests/dist/check_versions.py"
# Every file the check reads.
FILES = [
    "Cargo.toml",
    "CHANGELOG.md",
    "bindings-node/package.json",
    "examples/node/weather-server/package.json",
    "examples/python/weather-server/pyproject.toml",
    "bindings-python/python/oxmcp/__init__.py",
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    shutil.copytree(REPO / "bindings-node/npm", tmp_path / "bindings-node/npm")
    return tmp_path


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--root", str(root)], capture_output=True, text=True)


def edit_json(path: Path, change: object) -> None:
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path} has no {old!r}"
    path.write_text(text.replace(old, new, 1))


def test_the_committed_tree_agrees(tree: Path) -> None:
    proc = check(tree)
    assert proc.returncode == 0, proc.stderr


def test_a_platform_pin_of_another_version_is_named(tree: Path) -> None:
    edit_json(
        tree / "bindings-node/package.json",
        lambda d: d["optionalDependencies"].__setitem__("@oxmcp/darwin-arm64", "0.0.9"),
    )
    proc = check(tree)
    assert proc.returncode == 1
    assert "optionalDependencies[@oxmcp/darwin-arm64]: '0.0.9'" in proc.stderr, proc.stderr


def test_a_platform_folder_without_a_pin_is_named(tree: Path) -> None:
    shutil.copytree(tree / "bindings-node/npm/linux-x64-gnu", tree / "bindings-node/npm/linux-riscv64-gnu")
    proc = check(tree)
    assert proc.returncode == 1
    assert "optionalDependencies" in proc.stderr and "linux-riscv64-gnu" in proc.stderr, proc.stderr


def test_an_example_that_depends_on_another_oxmcp_is_named(tree: Path) -> None:
    replace_once(tree / "examples/python/weather-server/pyproject.toml", '"oxmcp==', '"oxmcp>=0.0,<9; oxmcp!=')
    proc = check(tree)
    assert proc.returncode == 1
    assert "examples/python/weather-server dependency on oxmcp" in proc.stderr, proc.stderr


def test_a_changelog_heading_without_a_date_is_named(tree: Path) -> None:
    replace_once(tree / "CHANGELOG.md", "## [Unreleased]", "## [Unreleased]\n\n## [0.0.1]")
    proc = check(tree)
    assert proc.returncode == 1
    assert "a release heading needs ' - YYYY-MM-DD'" in proc.stderr, proc.stderr


def test_a_bumped_workspace_version_is_seen_everywhere(tree: Path) -> None:
    replace_once(tree / "Cargo.toml", 'version = "', 'version = "9.')
    proc = check(tree)
    assert proc.returncode == 1
    # The npm package, its seven pins, every platform package, both examples, __version__.
    assert proc.stderr.count("version drift:") >= 7 + 7 + 5, proc.stderr
