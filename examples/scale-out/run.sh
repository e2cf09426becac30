#!/usr/bin/env bash
# Scale-out on one machine, for users to copy: a private redis-server, three replicas of the
# oxmcp conformance fixture server sharing it, and a round-robin TCP proxy in front of them.
# Point any MCP client at the proxy's URL; requests land on the replicas in turn and the
# session, its GET stream, answers to the server's requests and cancels follow them around.
#
#   examples/scale-out/run.sh            # proxy on http://127.0.0.1:8080/mcp
#   PROXY_PORT=9000 examples/scale-out/run.sh
#
# Needs redis-server (Debian: apt-get install redis-server) and cargo. Ctrl-C stops it all.
set -euo pipefail
cd "$(dirname "$0")/../.."

REDIS_PORT=${REDIS_PORT:-6390}
PROXY_PORT=${PROXY_PORT:-8080}
FIRST_REPLICA_PORT=${FIRST_REPLICA_PORT:-3101}
# Every replica must sign multi round-trip request state with the same key.
STATE_KEY=${STATE_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}

command -v redis-server >/dev/null || { echo "run.sh: redis-server is not on PATH" >&2; exit 1; }
cargo build --locked --features redis -p oxmcp --example conformance_server --example rr_proxy
bin=target/debug/examples

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# Nothing saved: this Redis lives as long as the demo (use persistence in production).
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >/dev/null &
pids+=($!)
until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.1; done

backends=()
for i in 0 1 2; do
  port=$((FIRST_REPLICA_PORT + i))
  "$bin/conformance_server" --http --port "$port" \
    --store "redis://127.0.0.1:$REDIS_PORT/" --state-key "$STATE_KEY" &
  pids+=($!)
  backends+=(--backend "127.0.0.1:$port")
done

"$bin/rr_proxy" --port "$PROXY_PORT" "${backends[@]}" &
pids+=($!)
echo "scale-out: three replicas behind http://127.0.0.1:$PROXY_PORT/mcp (Ctrl-C to stop)" >&2
wait
