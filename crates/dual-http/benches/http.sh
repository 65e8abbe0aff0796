#!/usr/bin/env bash
# Throughput of the dual-http handler against a bare hyper server, and peak RSS of a /data export.
# Figures go to docs/PERFORMANCE.md. Loopback only; every run is bounded in time.
#
#   bash crates/dual-http/benches/http.sh            # wrk if installed, else the built-in generator
#   DURATION=10 CONNECTIONS=64 LOADGEN=builtin bash crates/dual-http/benches/http.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
LOADGEN=${LOADGEN:-$(command -v wrk >/dev/null && echo wrk || echo builtin)}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
# The bench target's executable (cargo names it with a hash): built by `cargo bench --no-run`.
BIN=$(cargo bench -q -p dual-http --bench bench_server --no-run --message-format=json |
  grep '"name":"bench_server"' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n1)
[ -x "$BIN" ] || { echo "http.sh: no bench_server executable" >&2; exit 1; }
PIN_SERVER=() PIN_LOAD=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then PIN_SERVER=(taskset -c 0); PIN_LOAD=(taskset -c 1); fi

OUT=$(mktemp -d)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$OUT"' EXIT
BENCH_WORKERS=1 "${PIN_SERVER[@]}" "$BIN" serve $((DURATION * 8 + 60)) >"$OUT/urls" &
SERVER=$!
for _ in $(seq 50); do grep -q '^body_bytes=' "$OUT/urls" 2>/dev/null && break; sleep 0.1; done
BARE=$(sed -n 's/^bare=//p' "$OUT/urls")
DUAL=$(sed -n 's/^dual=//p' "$OUT/urls")
printf 'wrk.method = "POST"\nwrk.body = "{\\"limit\\": 100}"\nwrk.headers["Content-Type"] = "application/json"\n' >"$OUT/post.lua"

rps() { # URL [POST]
  if [ "$LOADGEN" = wrk ]; then
    local script=(); [ "${2:-}" = post ] && script=(-s "$OUT/post.lua")
    "${PIN_LOAD[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" "${script[@]}" "$1" | awk '/Requests\/sec/ {printf "%.0f", $2}'
  else
    local body=(); [ "${2:-}" = post ] && body=('{"limit": 100}')
    BENCH_WORKERS=1 "${PIN_LOAD[@]}" "$BIN" load "$1" "$CONNECTIONS" "$DURATION" "${body[@]}" | sed -n 's/.*rps=//p'
  fi
}

echo "load generator: $LOADGEN, $CONNECTIONS connections, ${DURATION}s per run, server on 1 worker thread"
B1=$(rps "$BARE"); G=$(rps "$DUAL"); P=$(rps "$DUAL" post); B2=$(rps "$BARE")
BARE_AVG=$(( (B1 + B2) / 2 ))
printf '| target | requests/s | vs bare |\n|---|---:|---:|\n'
printf '| bare hyper, fixed 100-row JSON body | %s (runs: %s, %s) | 100%% |\n' "$BARE_AVG" "$B1" "$B2"
printf '| GET /{id} (metadata) | %s | %s%% |\n' "$G" $(( G * 100 / BARE_AVG ))
printf '| POST /{id} (100-row page) | %s | %s%% |\n' "$P" $(( P * 100 / BARE_AVG ))

echo
echo "peak RSS of a /data export (process: server + client, in one process)"
for rows in 10000 100000 1000000; do
  for format in ndjson json csv; do "$BIN" export "$rows" "$format"; done
done
