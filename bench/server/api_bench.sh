#!/bin/sh
# POST /v1/jobs per second with keep-alive over loopback (wrk), each request
# creating a new job (no id: the daemon generates one).
#   bench/server/api_bench.sh SERVE_BIN [CONNECTIONS] [SECONDS] [SYNC]
set -eu
SERVE=$1; CONNS=${2:-64}; SECS=${3:-10}; SYNC=${4:-full}
WORK=$(mktemp -d /tmp/ax-api-bench.XXXXXX)
"$SERVE" serve --store "sqlite:$WORK/ax.db" --listen 127.0.0.1:0 --port-file "$WORK/port" \
  --sync "$SYNC" --log-level warn --io-threads 2 &
PID=$!
for _ in $(seq 1 500); do [ -s "$WORK/port" ] && break; sleep 0.02; done
PORT=$(cat "$WORK/port")
cat > "$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"schedule":{"in":"2h"},"target":{"http":{"url":"http://127.0.0.1:9/x"}}}'
LUA
wrk -t2 -c"$CONNS" -d"${SECS}s" -s "$WORK/post.lua" "http://127.0.0.1:$PORT/v1/jobs"
curl -s "http://127.0.0.1:$PORT/v1/stats"; echo
kill -TERM $PID; wait $PID || true
rm -rf "$WORK"
