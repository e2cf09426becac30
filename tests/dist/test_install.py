"""What `make dist` wrote installs and runs where there is no Rust.

Every test here runs its installs and programs with a PATH that holds no `cargo` or `rustc`
(asserted, not assumed), in a fresh venv or a fresh folder under pytest's tmp_path:

- the wheel: `pip install --no-index --find-links dist oxmcp` (its pure-Python dependencies
  come from the registry first), then the README's Python server and client;
- the npm packages: the main tarball with this platform's package, then the README's Node
  server and client; the main tarball alone, and a platform package of another version,
  must fail with the loader's error that names the package it wanted;
- the published example servers: `uvx --find-links dist oxmcp-weather` and
  `npx --yes -p … oxmcp-weather`, each answering `tools/call get_weather {"city": "Beijing"}`
  from the official Python and TypeScript SDK clients.

Run by `make dist-test` from the test venv (pytest and the official Python SDK).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("OXMCP_DIST", REPO / "dist"))
VERSION = os.environ.get("OXMCP_VERSION", "")
# The Python the venvs are made from (not the test venv's): what a user has.
BASE_PYTHON = os.environ.get("OXMCP_BASE_PYTHON", sys.executable)
UVX = os.environ.get("OXMCP_UVX", "")
TS_SDK_DIR = Path(os.environ.get("OXMCP_INTEROP_NODE_DIR", REPO / "tests/interop/node"))
TRIPLE = "linux-x64-gnu"
TIMEOUT = 600


def no_rust_path(*first: Path) -> str:
    """PATH for a user without Rust: the given dirs, node's, and the system's."""
    node = shutil.which("node")
    assert node, "node is not on PATH"
    dirs = [str(d) for d in first] + [str(Path(node).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    path = os.pathsep.join(dict.fromkeys(dirs))
    for tool in ("cargo", "rustc", "rustup"):
        assert shutil.which(tool, path=path) is None, f"{tool} is on the test PATH {path}"
    return path


def no_rust_env(*first: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP", "RUST"))}
    env["PATH"] = no_rust_path(*first)
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    return env


def run(cmd: list[str], env: dict[str, str], cwd: Path, **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, **kw)
    return proc


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"{proc.args}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def one(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    assert len(found) == 1, f"dist/{pattern}: {[f.name for f in found]}"
    return found[0]


def readme_blocks(language: str) -> list[str]:
    """The README's fenced blocks of one language, in order: a server, then its client."""
    text = (REPO / "README.md").read_text()
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.S | re.M)


# --- the wheel -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with oxmcp installed from dist/ only (no index for oxmcp itself)."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    ok(subprocess.run([BASE_PYTHON, "-m", "venv", str(venv)], capture_output=True, text=True))
    env = no_rust_env(venv / "bin")
    wheel = one("oxmcp-*-abi3-*.whl")
    # The dependencies the wheel declares (pure Python) come from the registry ...
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    requires = [
        line.split(":", 1)[1].strip()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:") and "extra ==" not in line
    ]
    assert any(r.startswith("pydantic") for r in requires), requires
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-input"]
    ok(run([*pip, *requires], env, venv))
    # ... and oxmcp only from dist/: an sdist there must never be picked (it needs Rust).
    ok(run([*pip, "--no-index", "--find-links", str(DIST), "--only-binary", ":all:", "oxmcp"], env, venv))
    return venv


def test_the_wheel_is_the_portable_one() -> None:
    wheel = one("oxmcp-*.whl")
    assert wheel.name == f"oxmcp-{VERSION}-cp310-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl" or (
        wheel.name == f"oxmcp-{VERSION}-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
    ), wheel.name
    one(f"oxmcp-{VERSION}.tar.gz")


def test_pip_installs_the_wheel_and_the_readme_server_answers_its_client(wheel_venv: Path, tmp_path: Path) -> None:
    env = no_rust_env(wheel_venv / "bin")
    server, client = readme_blocks("python")[:2]
    (tmp_path / "weather.py").write_text(server)
    (tmp_path / "client.py").write_text(client)
    out = ok(run([str(wheel_venv / "bin" / "python"), "client.py"], env, tmp_path))
    assert out.strip() == "1 tool(s); Paris: clear, 21 °C", out
    # The console script is there too and runs the core's CLI.
    assert "tools" in ok(run([str(wheel_venv / "bin" / "oxmcp"), "--help"], env, tmp_path))
    version = ok(run([str(wheel_venv / "bin" / "python"), "-c", "import oxmcp; print(oxmcp.__version__)"], env, tmp_path))
    assert version.strip() == VERSION


def test_a_damaged_wheel_is_refused_and_nothing_is_installed(tmp_path: Path) -> None:
    venv = tmp_path / "v"
    ok(subprocess.run([BASE_PYTHON, "-m", "venv", str(venv)], capture_output=True, text=True))
    env = no_rust_env(venv / "bin")
    wheel = one("oxmcp-*-abi3-*.whl")
    # The same name, cut in half: pip must refuse it rather than install a broken package.
    broken = tmp_path / "broken" / wheel.name
    broken.parent.mkdir()
    broken.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-input", "--no-deps"]
    proc = run([*pip, "--no-index", "--find-links", str(broken.parent), "oxmcp"], env, tmp_path)
    assert proc.returncode != 0
    assert "zip" in (proc.stdout + proc.stderr).lower() or "invalid" in (proc.stdout + proc.stderr).lower()
    check = run([str(venv / "bin" / "python"), "-c", "import oxmcp"], env, tmp_path)
    assert check.returncode != 0 and "ModuleNotFoundError" in check.stderr


# --- the npm packages ------------------------------------------------------------------------


def npm_folder(path: Path, env: dict[str, str], *tarballs: Path) -> Path:
    path.mkdir(parents=True)
    ok(run(["npm", "init", "-y"], env, path))
    ok(run(["npm", "install", "--no-audit", "--no-fund", *map(str, tarballs)], env, path))
    return path


def test_the_main_package_holds_no_binary_and_pins_every_platform() -> None:
    main = one(f"oxmcp-{VERSION}.tgz")
    platform = one(f"oxmcp-{TRIPLE}-{VERSION}.tgz")
    with tarfile.open(main) as t:
        names = t.getnames()
        manifest = json.load(t.extractfile("package/package.json"))  # type: ignore[arg-type]
    assert not [n for n in names if n.endswith(".node")], names
    pins = manifest["optionalDependencies"]
    assert pins[f"@oxmcp/{TRIPLE}"] == VERSION and set(pins.values()) == {VERSION}, pins
    with tarfile.open(platform) as t:
        nodes = [n for n in t.getnames() if n.endswith(".node")]
        plat = json.load(t.extractfile("package/package.json"))  # type: ignore[arg-type]
    assert nodes == [f"package/oxmcp.{TRIPLE}.node"], nodes
    assert (plat["name"], plat["os"], plat["cpu"], plat["libc"]) == (
        f"@oxmcp/{TRIPLE}",
        ["linux"],
        ["x64"],
        ["glibc"],
    )


def test_npm_installs_the_tarballs_and_the_readme_server_answers_its_client(tmp_path: Path) -> None:
    env = no_rust_env()
    main, platform = one(f"oxmcp-{VERSION}.tgz"), one(f"oxmcp-{TRIPLE}-{VERSION}.tgz")
    work = npm_folder(tmp_path / "app", env, main, platform)
    # The README's server imports zod, which its users install from the registry.
    ok(run(["npm", "install", "--no-audit", "--no-fund", "zod@4"], env, work))
    server, client = readme_blocks("js")[:2]
    (work / "weather.mjs").write_text(server)
    (work / "client.mjs").write_text(client)
    out = ok(run(["node", "client.mjs"], env, work))
    assert out.strip() == "1 tool(s); Paris: clear, 21 °C", out
    assert "tools" in ok(run(["npx", "--no-install", "oxmcp", "--help"], env, work))


def test_the_main_package_alone_says_which_package_it_wanted(tmp_path: Path) -> None:
    env = no_rust_env()
    work = npm_folder(tmp_path / "app", env, one(f"oxmcp-{VERSION}.tgz"))
    proc = run(["node", "-e", "require('oxmcp')"], env, work)
    assert proc.returncode != 0
    assert f"the native engine for {TRIPLE} is the package @oxmcp/{TRIPLE}" in proc.stderr, proc.stderr
    assert f"npm install @oxmcp/{TRIPLE}@{VERSION}" in proc.stderr, proc.stderr
    assert "OXMCP_NATIVE_MISSING" in proc.stderr, proc.stderr


def test_a_platform_package_of_another_version_is_refused(tmp_path: Path) -> None:
    env = no_rust_env()
    # The same binary, repacked as version 0.0.1-other: the loader must not run it.
    unpacked = tmp_path / "unpacked"
    with tarfile.open(one(f"oxmcp-{TRIPLE}-{VERSION}.tgz")) as t:
        t.extractall(unpacked, filter="data")
    manifest = unpacked / "package" / "package.json"
    data = json.loads(manifest.read_text())
    data["version"] = "0.0.1-other"
    manifest.write_text(json.dumps(data))
    work = npm_folder(tmp_path / "app", env, one(f"oxmcp-{VERSION}.tgz"), unpacked / "package")
    proc = run(["node", "-e", "require('oxmcp')"], env, work)
    assert proc.returncode != 0
    assert f"oxmcp {VERSION} needs @oxmcp/{TRIPLE}@{VERSION}, but 0.0.1-other is installed" in proc.stderr, (
        proc.stderr
    )


# --- the published example servers under uvx and npx, driven by the official SDKs -----------

PY_SDK_CLIENT = textwrap.dedent(
    """
    import json, sys
    import anyio
    from mcp import Client, StdioServerParameters

    async def main():
        params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
        async with Client(params) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == ["get_weather"], tools
            result = await client.call_tool("get_weather", {"city": "Beijing"})
            assert not result.is_error, result
            print(json.dumps(result.structured_content, ensure_ascii=False))

    anyio.run(main)
    """
)


def ts_sdk_client(sdk: Path) -> str:
    esm = sdk / "node_modules/@modelcontextprotocol/sdk/dist/esm"
    return textwrap.dedent(
        f"""
        import {{ Client }} from '{(esm / "client/index.js").as_uri()}';
        import {{ StdioClientTransport }} from '{(esm / "client/stdio.js").as_uri()}';
        const [command, ...args] = process.argv.slice(2);
        const client = new Client({{ name: 'dist-test', version: '1.0.0' }});
        await client.connect(new StdioClientTransport({{ command, args, env: process.env }}));
        const {{ tools }} = await client.listTools();
        if (tools.map((t) => t.name).join() !== 'get_weather') throw new Error(JSON.stringify(tools));
        const result = await client.callTool({{ name: 'get_weather', arguments: {{ city: 'Beijing' }} }});
        if (result.isError) throw new Error(JSON.stringify(result));
        console.log(JSON.stringify(result.structuredContent));
        await client.close();
        """
    )


def launcher(kind: str, tmp_path: Path) -> list[str]:
    if kind == "uvx":
        assert UVX, "OXMCP_UVX is not set"
        # A private cache so nothing comes from an earlier run; the system's certificates so a
        # proxy's own CA is trusted, as in the seed story.
        return [UVX, "--no-config", "--cache-dir", str(tmp_path / "uv-cache"), "--system-certs",
                "--find-links", str(DIST), "oxmcp-weather"]
    return ["npx", "--yes", "-p", str(one(f"oxmcp-{VERSION}.tgz")), "-p", str(one(f"oxmcp-{TRIPLE}-{VERSION}.tgz")),
            "-p", str(one(f"oxmcp-weather-{VERSION}.tgz")), "oxmcp-weather"]


@pytest.mark.parametrize("sdk", ["python-sdk", "typescript-sdk"])
@pytest.mark.parametrize("kind", ["uvx", "npx"])
def test_the_published_weather_server_answers_beijing(kind: str, sdk: str, tmp_path: Path) -> None:
    command = launcher(kind, tmp_path)
    env = no_rust_env(Path(UVX).parent) if kind == "uvx" else no_rust_env()
    # A private npm cache, so npx takes the tarballs, not an earlier run's copy.
    env["npm_config_cache"] = str(tmp_path / "npm-cache")
    if sdk == "python-sdk":
        (tmp_path / "client.py").write_text(PY_SDK_CLIENT)
        out = ok(run([sys.executable, "client.py", *command], env, tmp_path))
    else:
        (tmp_path / "client.mjs").write_text(ts_sdk_client(TS_SDK_DIR))
        out = ok(run(["node", "client.mjs", *command], env, tmp_path))
    weather = json.loads(out.strip().splitlines()[-1])
    assert weather["city"] == "Beijing", weather
    assert isinstance(weather["temperature_c"], (int, float)), weather

