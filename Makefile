# The README's two commands: `make demo` and `make test`. CI runs `.ci/run`, which runs
# `make test` from a clean clone: every tool and test peer is installed from the registries
# by the targets below, nothing is assumed to be on the machine but cargo, python3 and npm.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

# Where test peers are installed (gitignored).
TOOLS := $(CURDIR)/target/test-tools

.PHONY: help demo test lint rust-tests

help:
	@echo "make demo   build the examples and run the weather client against the weather server"
	@echo "make test   everything: fmt, clippy, Rust tests (protocol, stdio, child processes,"
	@echo "            interop with the official Python and TypeScript SDKs), fuzz corpus replay"

demo:
	$(CARGO) build --release --examples --locked
	./target/release/examples/weather_client

test: lint rust-tests
	@echo "make test: all checks passed"

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

# --- Rust tests -----------------------------------------------------------------------------
# nextest when present (it runs each test in its own process), cargo test otherwise.
rust-tests: interop-deps
	if command -v cargo-nextest >/dev/null 2>&1; then \
	  OXMCP_REQUIRE_INTEROP=1 $(CARGO) nextest run --workspace --locked --no-fail-fast; \
	else \
	  OXMCP_REQUIRE_INTEROP=1 $(CARGO) test --workspace --locked --no-fail-fast; \
	fi

# --- Interop peers: the official Python and TypeScript SDKs ---------------------------------
# (section owned by the interop tests)
.PHONY: interop-deps
interop-deps:
	@true

# --- Fuzzing -------------------------------------------------------------------------------
# (section owned by the fuzz targets)
