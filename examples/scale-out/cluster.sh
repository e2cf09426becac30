#!/usr/bin/env bash
# A whole scale-out cluster behind one URL, started like a single fixture server, so the
# conformance runner can test it: `cluster.sh --http --port 0 [--stateless]` starts a private
# redis-server on a free port, three replicas of the conformance fixture server sharing it,
# and the round-robin proxy, then prints `listening on http://127.0.0.1:PORT/mcp` (the proxy)
# on stderr. SIGTERM or SIGINT stops them all.
#
#   node tests/conformance/run.mjs --server examples/scale-out/cluster.sh \
#     --client target/debug/examples/conformance_client --only server-0.1.16
#
# Expects the examples built with the redis feature:
#   cargo build --features redis -p oxmcp --example conformance_server --example rr_proxy
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${OXMCP_EXAMPLES:-$here/../../target/debug/examples}
port=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --http) ;;
    --port) port=$2; shift ;;
    *) extra+=("$1") ;;
  esac
  shift
done
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits for `listening on http://HOST:PORT` in a log and prints HOST:PORT.
announced() {
  for _ in $(seq 1 300); do
    if grep -qo 'listening on [^ ]*' "$1" 2>/dev/null; then
      grep -o 'listening on [^ ]*' "$1" | head -1 | sed -e 's|listening on ||' -e 's|^http://||' -e 's|/mcp$||'
      return
    fi
    sleep 0.1
  done
  echo "cluster.sh: $1 never announced itself" >&2
  cat "$1" >&2
  exit 1
}

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >/dev/null &
pids+=($!)
until (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; do sleep 0.1; done
key=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')

backends=()
for i in 0 1 2; do
  "$bin/conformance_server" --http --port 0 --store "redis://127.0.0.1:$redis_port/" \
    --state-key "$key" ${extra[@]+"${extra[@]}"} 2>"$work/replica$i.log" &
  pids+=($!)
done
for i in 0 1 2; do backends+=(--backend "$(announced "$work/replica$i.log")"); done

"$bin/rr_proxy" --port "$port" "${backends[@]}" 2>"$work/proxy.log" &
pids+=($!)
proxy=$(announced_proxy() { for _ in $(seq 1 300); do
    if grep -q 'proxy listening on' "$work/proxy.log"; then
      grep -o 'proxy listening on [^ ]*' "$work/proxy.log" | head -1 | sed 's|proxy listening on ||'; return
    fi; sleep 0.1; done; exit 1; }; announced_proxy)
echo "scale-out cluster listening on http://$proxy/mcp" >&2
wait
