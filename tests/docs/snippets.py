"""Runs every code block of README.md, CONTRIBUTING.md and docs/, and checks their links.

The documentation promises that each snippet works as printed. This script keeps that
promise honest: it reads each Markdown file in order, gives the file a scratch folder, and
runs its blocks there one after another, so a later block can use what an earlier one wrote
(the server a client starts, the config a CLI call reads).

- ``python`` blocks run with the test venv's interpreter, i.e. the installed wheel;
- ``js`` blocks run with node from a folder whose ``node_modules`` holds the packed tarball;
- ``sh`` blocks that run the ``oxmcp`` command run with bash, the CLI first on ``PATH``;
  other shell blocks (installs, ``make``) are listed, not run;
- ``json`` and ``toml`` blocks must parse; ``text`` blocks are not code;
- ``rust`` blocks are doctests (``cargo test --doc``, see ``core/src/docs.rs``): this script
  checks that every file with a rust block is included there, that a block tied to an
  example file is that file, and runs the examples a block names.

An HTML comment right above a block steers it:

``<!-- snippet: file NAME -->``
    save the block as NAME in the scratch folder (run later by another block);
``<!-- snippet: server NAME [call TOOL JSON] [expect TEXT] -->``
    save the block as NAME, start it as a stdio server under ``oxmcp``, list its tools and
    call TOOL with JSON (default: the first tool is listed only);
``<!-- snippet: expect TEXT -->``
    run the block and require TEXT in its standard output;
``<!-- snippet: exit N -->``
    the block's expected exit status (default 0);
``<!-- snippet: same-as PATH [run EXAMPLE] -->``
    the block is the repository file PATH (less its ``//!`` lines); ``run`` runs the built
    example EXAMPLE from the repository root (``expect`` applies);
``<!-- snippet: skip REASON -->``
    a block that cannot run here (a real LLM API, a real authorization server): counted
    and listed at the end, so that it stays rare.

Exit status 0 when every block ran as expected and every internal link and anchor resolves.
The last line is ``snippets: N passed, M failed``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

try:  # Python 3.11+; on 3.10 a toml block fails with a clear message instead
    import tomllib
except ModuleNotFoundError:
    tomllib = None  # type: ignore[assignment]

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
DIRECTIVE = re.compile(r"^\s*<!--\s*snippet:\s*(?P<body>.*?)\s*-->\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(?P<text>.+?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
EXPLICIT_ANCHOR = re.compile(r"\{\s*#(?P<id>[\w-]+)[^}]*\}\s*$")
HTML_ID = re.compile(r"""<a\s+(?:id|name)=["'](?P<id>[^"']+)["']""")
CLI_LINE = re.compile(r"^\s*(?:\$\s+)?oxmcp(?:\s|$)")

LANG_ALIASES = {
    "py": "python",
    "python": "python",
    "js": "js",
    "javascript": "js",
    "mjs": "js",
    "cjs": "cjs",
    "sh": "sh",
    "bash": "sh",
    "shell": "sh",
    "console": "sh",
    "rust": "rust",
    "json": "json",
    "toml": "toml",
    "text": "text",
}
BLOCK_TIMEOUT_S = 90


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    info: str
    code: str
    directive: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Tally:
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_run_shell: list[str] = field(default_factory=list)
    rust: list[str] = field(default_factory=list)
    text: int = 0
    external: set[str] = field(default_factory=set)

    def ok(self) -> None:
        self.passed += 1

    def fail(self, block: Block | None, why: str) -> None:
        where = block.where if block else "links"
        self.failed.append(f"{where}: {why}")
        print(f"FAIL {where}: {why}", flush=True)


def parse_blocks(path: Path, rel: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, with the directive above each."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    pending: list[str] = []
    while i < len(lines):
        line = lines[i]
        m_dir = DIRECTIVE.match(line)
        if m_dir:
            pending = shlex.split(m_dir.group("body"))
            i += 1
            continue
        m = FENCE.match(line)
        if not m:
            if line.strip():
                pending = []
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        start = i + 1
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = lines[i].strip()
            if close.startswith(fence[0] * len(fence)) and not close.strip(fence[0]):
                break
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        first = info.split(",")[0].split()[0] if info else ""
        lang = LANG_ALIASES.get(first.lower(), f"?{first}")
        blocks.append(Block(rel, start, lang, info, "\n".join(body) + "\n", pending))
        pending = []
    return blocks


def directive_value(block: Block, key: str) -> str | None:
    words = block.directive
    for j, w in enumerate(words):
        if w == key and j + 1 < len(words):
            return words[j + 1]
    return None


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.repo: Path = args.repo.resolve()
        self.scratch: Path = args.scratch.resolve()
        self.python: str = args.python
        self.node_modules: Path = args.node_modules.resolve()
        self.tally = Tally()
        self.rust_doc_files = self._doctest_includes()
        path = os.pathsep.join(
            [str(Path(p).resolve()) for p in args.path] + [os.environ.get("PATH", "")]
        )
        self.env = {
            **os.environ,
            "PATH": path,
            "OXMCP_REPO": str(self.repo),
            "PYTHONDONTWRITEBYTECODE": "1",
            "NO_COLOR": "1",
        }

    def _doctest_includes(self) -> set[str]:
        """The Markdown files core/src/docs.rs turns into doctests."""
        text = (self.repo / "core/src/docs.rs").read_text(encoding="utf-8")
        return {m.group(1) for m in re.finditer(r'include_str!\("\.\./\.\./([^"]+)"\)', text)}

    # --- one block ---------------------------------------------------------------------------

    def block(self, block: Block, cwd: Path) -> None:
        words = block.directive
        if words and words[0] == "skip":
            reason = " ".join(words[1:]) or "no reason given"
            self.tally.skipped.append(f"{block.where} ({block.lang}): {reason}")
            return
        lang = block.lang
        if lang.startswith("?"):
            self.tally.fail(block, f"untagged or unknown block language {block.info!r}")
            return
        if lang == "text":
            self.tally.text += 1
            return
        if lang == "rust":
            self.rust_block(block)
            return
        if words and words[0] in ("file", "server"):
            if len(words) < 2:
                self.tally.fail(block, f"`{words[0]}` needs a file name")
                return
            target = cwd / words[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
        if lang == "json":
            self.parse_data(block, json.loads)
        elif lang == "toml":
            if tomllib is None:
                self.tally.fail(block, "checking toml blocks needs Python 3.11 (tomllib)")
            else:
                self.parse_data(block, tomllib.loads)
        elif words and words[0] == "file":
            self.tally.ok()
        elif words and words[0] == "server":
            self.serve(block, cwd, words[1])
        elif lang == "python":
            self.execute(block, cwd, [self.python, self.save(block, cwd, ".py")])
        elif lang in ("js", "cjs"):
            ext = ".cjs" if lang == "cjs" else ".mjs"
            self.execute(block, cwd, ["node", self.save(block, cwd, ext)])
        elif lang == "sh":
            if any(CLI_LINE.match(line) for line in block.code.splitlines()):
                script = "set -euo pipefail\n" + block.code
                self.execute(block, cwd, ["bash", "-c", script])
            else:
                self.tally.not_run_shell.append(block.where)

    def save(self, block: Block, cwd: Path, ext: str) -> str:
        name = f"_block_{block.line}{ext}"
        (cwd / name).write_text(block.code, encoding="utf-8")
        return name

    def parse_data(self, block: Block, parse: object) -> None:
        try:
            parse(block.code)  # type: ignore[operator]
        except ValueError as e:
            self.tally.fail(block, f"does not parse: {e}")
            return
        self.tally.ok()

    def execute(self, block: Block, cwd: Path, cmd: list[str]) -> None:
        expected_exit = int(directive_value(block, "exit") or 0)
        try:
            done = run(cmd, cwd, self.env)
        except subprocess.TimeoutExpired:
            self.tally.fail(block, f"still running after {BLOCK_TIMEOUT_S} s")
            return
        except OSError as e:
            self.tally.fail(block, f"cannot run {cmd[0]}: {e}")
            return
        if done.returncode != expected_exit:
            self.tally.fail(
                block,
                f"exit {done.returncode} (expected {expected_exit})\n--- stdout\n{done.stdout}"
                f"--- stderr\n{done.stderr[-4000:]}",
            )
            return
        expect = directive_value(block, "expect")
        if expect is not None and expect not in done.stdout:
            self.tally.fail(block, f"stdout lacks {expect!r}\n--- stdout\n{done.stdout}")
            return
        self.tally.ok()

    def serve(self, block: Block, cwd: Path, name: str) -> None:
        """A stdio server block: start it under the CLI, list its tools, maybe call one."""
        launcher = {"python": [self.python], "js": ["node"], "cjs": ["node"]}.get(block.lang)
        if launcher is None:
            self.tally.fail(block, f"`server` is for python or js blocks, not {block.lang}")
            return
        config = cwd / f"_server_{block.line}.json"
        server = {"command": launcher[0], "args": [*launcher[1:], name]}
        config.write_text(json.dumps({"mcpServers": {"snippet": server}}), encoding="utf-8")
        tool = directive_value(block, "call")
        if tool is None:
            cmd = ["oxmcp", "tools", "--config", config.name, "--format", "mcp"]
        else:
            after = block.directive[block.directive.index("call") + 2 :]
            arguments = after[0] if after and after[0] != "expect" else "{}"
            cmd = ["oxmcp", "call", "--config", config.name, "snippet", tool, arguments]
        self.execute(block, cwd, cmd)

    def rust_block(self, block: Block) -> None:
        rel = block.path.as_posix()
        if rel not in self.rust_doc_files:
            self.tally.fail(block, f"a rust block in {rel}, which core/src/docs.rs lacks")
            return
        same = directive_value(block, "same-as")
        if same is not None:
            source = without_module_doc((self.repo / same).read_text(encoding="utf-8"))
            if source != block.code:
                self.tally.fail(block, f"differs from {same}")
                return
        example = directive_value(block, "run")
        if example is not None:
            # A compiled example (built by `make docs-test`), run from the repository root.
            binary = self.repo / "target/debug/examples" / example
            self.tally.rust.append(f"{block.where}: the example {example}, built and run")
            self.execute(block, self.repo, [str(binary)])
            return
        if directive_value(block, "expect") is not None:
            self.tally.fail(block, "`expect` on a doctest cannot be checked: assert in the code")
            return
        mode = "doctest, compiled only (no_run)" if "no_run" in block.info else "doctest, run"
        self.tally.rust.append(f"{block.where}: {mode}")
        self.tally.ok()

    # --- one file ----------------------------------------------------------------------------

    def file(self, rel: Path) -> None:
        cwd = self.scratch / rel.with_suffix("")
        shutil.rmtree(cwd, ignore_errors=True)
        cwd.mkdir(parents=True)
        (cwd / "node_modules").symlink_to(self.node_modules, target_is_directory=True)
        for block in parse_blocks(self.repo / rel, rel):
            self.block(block, cwd)

    # --- links -------------------------------------------------------------------------------

    def links(self, files: list[Path]) -> None:
        anchors = {rel: heading_anchors(self.repo / rel, github=not in_docs(rel)) for rel in files}
        for rel in files:
            text = strip_code(self.repo / rel)
            for m in LINK.finditer(text):
                target = m.group("target")
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    if target.startswith(("http://", "https://")):
                        self.tally.external.add(target)
                    continue
                page, _, anchor = target.partition("#")
                dest = (rel.parent / page) if page else rel
                dest = Path(os.path.normpath(dest))
                where = f"{rel}: [{m.group('text')}]({target})"
                if page and not (self.repo / dest).exists():
                    if not is_generated(dest):
                        self.tally.fail(None, f"{where}: {dest} does not exist")
                    continue
                if anchor and dest.suffix == ".md":
                    known = anchors.get(dest)
                    if known is None:
                        known = heading_anchors(self.repo / dest, github=not in_docs(dest))
                    if anchor not in known:
                        self.tally.fail(None, f"{where}: no anchor #{anchor} in {dest}")


def without_module_doc(source: str) -> str:
    """An example file as the docs show it: without its leading `//!` lines."""
    lines = source.splitlines(keepends=True)
    while lines and (lines[0].startswith("//!") or not lines[0].strip()):
        lines.pop(0)
    return "".join(lines)


def in_docs(rel: Path) -> bool:
    return rel.parts[:1] == ("docs",)


def is_generated(rel: Path) -> bool:
    """The API reference is generated into docs/api/ by `make docs`."""
    return rel.parts[:2] == ("docs", "api")


def strip_code(path: Path) -> str:
    """The file's text with fenced blocks and inline code removed (links there are not links)."""
    out: list[str] = []
    fence: str | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = FENCE.match(line)
        if m and fence is None:
            fence = m.group("fence")
            continue
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def heading_anchors(path: Path, github: bool) -> set[str]:
    """The anchors a renderer makes for the file's headings: GitHub's for the top-level files,
    Python-Markdown's toc extension (MkDocs) for docs/."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in strip_code(path).splitlines():
        for m in HTML_ID.finditer(line):
            out.add(m.group("id"))
        h = HEADING.match(line)
        if not h:
            continue
        text = h.group("text")
        explicit = EXPLICIT_ANCHOR.search(text)
        if explicit:
            out.add(explicit.group("id"))
            continue
        slug = github_slug(text) if github else toc_slug(text)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}_{n}" if not github else f"{slug}-{n}")
    return out


def github_slug(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def toc_slug(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def markdown_files(repo: Path) -> list[Path]:
    files = [Path("README.md"), Path("CONTRIBUTING.md")]
    files += sorted(
        p.relative_to(repo)
        for p in (repo / "docs").rglob("*.md")
        if not is_generated(p.relative_to(repo))
    )
    return [f for f in files if (repo / f).exists()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=Path.cwd())
    parser.add_argument("--scratch", type=Path, required=True)
    parser.add_argument("--python", required=True, help="the interpreter with the wheel")
    parser.add_argument("--node-modules", type=Path, required=True, help="holds the tarball")
    parser.add_argument("--path", action="append", default=[], help="prepended to PATH")
    parser.add_argument("--links-only", action="store_true")
    parser.add_argument("files", nargs="*", type=Path, help="default: every documentation file")
    args = parser.parse_args()

    runner = Runner(args)
    files = args.files or markdown_files(runner.repo)
    runner.links(files)
    if not args.links_only:
        for rel in files:
            print(f"== {rel}", flush=True)
            runner.file(rel)

    t = runner.tally
    print(f"\nrust blocks (run by cargo test --doc in docs-test): {len(t.rust)}")
    for line in t.rust:
        print(f"  {line}")
    print(f"shell blocks not run (no oxmcp command: installs, make): {len(t.not_run_shell)}")
    for line in t.not_run_shell:
        print(f"  {line}")
    print(f"text blocks (output, diagrams): {t.text}")
    print(f"external links (listed, not fetched): {len(t.external)}")
    for url in sorted(t.external):
        print(f"  {url}")
    print(f"markers (`snippet: skip`): {len(t.skipped)}")
    for line in t.skipped:
        print(f"  {line}")
    if t.failed:
        print(f"\n{len(t.failed)} failures:")
        for line in t.failed:
            print(f"  {line.splitlines()[0]}")
    print(f"snippets: {t.passed} passed, {len(t.failed)} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
