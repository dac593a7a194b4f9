#!/usr/bin/env bash
# Connection churn (issue 19): one-request connections (Connection: close and
# HTTP/1.0, read to end of stream, closed), as fast as 4 client threads go, against
# one or two thumbd binaries, rounds alternating; each round starts a fresh daemon
# on 127.0.0.1 and says whether it was still alive after BENCH_SECONDS (default 10).
# The client is Tests/Benchmarks/churn.c, the C twin of ConnectionChurnTests' client.
# Usage: Tests/Benchmarks/churn.sh BIN_A [BIN_B] [ROUNDS]   (default 3 rounds)
set -euo pipefail
A=$(realpath "${1:?usage: churn.sh BIN_A [BIN_B] [ROUNDS]}"); B=${2:+$(realpath "$2")}; ROUNDS=${3:-3}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bench_init
cc -O2 -pthread -o "$W/churn" Tests/Benchmarks/churn.c
PORT=18310
cat > "$W/churn.json" <<CONF
{"listen": "127.0.0.1:$PORT", "diskStore": {"path": "$W/store"}, "log": {"accessLog": false}}
CONF
for i in $(seq "$ROUNDS"); do
  for side in A ${B:+B}; do
    BIN=$A; [ "$side" = B ] && BIN=$B
    bench_daemon "$BIN" "$W/churn.json" "$PORT" "$W/daemon-$side$i.log"
    RESULT=$("$W/churn" "$PORT" 4 "${BENCH_SECONDS:-10}")
    if kill -0 "$BENCH_PID" 2>/dev/null; then STATE=alive; kill "$BENCH_PID"; wait "$BENCH_PID" 2>/dev/null || true
    else wait "$BENCH_PID" 2>/dev/null && STATE=exited || STATE="died (status $?)"; fi
    echo "round $i $side: $RESULT; daemon $STATE"
    sleep 1
  done
done
