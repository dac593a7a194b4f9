# Shared by the benchmark scripts (source it from the repository root): a work
# directory and background processes that end with the script, the standard
# inputs, the release binary, a static origin, a daemon, thumbor and SeaweedFS
# on loopback.
# Environment: BENCH_SECONDS (default 10) is the length of every wrk run through
# bench_wrk (a short value makes a quick trial run, not a measurement);
# THUMBD_BIN, when set, is the thumbd used instead of building the release one;
# BENCH_INPUTS is where the inputs are made (default .build-bench-inputs).

# Sets W (a fresh work directory) and ends everything started with bench_bg on exit.
bench_init() {
  W=$(mktemp -d)
  BENCH_PIDS=()
  BENCH_THUMBOR=""
  trap bench_cleanup EXIT
}

bench_cleanup() {
  bench_end_thumbor
  for p in ${BENCH_PIDS[@]+"${BENCH_PIDS[@]}"}; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$W"
}

# Runs "$@" in the background, remembered for cleanup; its pid in BENCH_PID.
# Its output goes to $BENCH_LOG (default /dev/null), never to a $(...) pipe.
bench_bg() {
  "$@" >"${BENCH_LOG:-/dev/null}" 2>&1 &
  BENCH_PID=$!
  BENCH_PIDS+=("$BENCH_PID")
}

# Makes the standard inputs (Tests/Benchmarks/make-inputs.sh, from the repository's
# own fixtures) once, and sets INPUTS to their absolute directory. Arguments
# (--formats) go to make-inputs.sh.
bench_inputs() {
  INPUTS=${BENCH_INPUTS:-$PWD/.build-bench-inputs}   # absolute: vipsthumbnail -o resolves relative names against the input's folder
  bash Tests/Benchmarks/make-inputs.sh "$@" "$INPUTS" >/dev/null
  INPUTS=$(cd "$INPUTS" && pwd)
}

# Builds thumbd in release and prints its path ($THUMBD_BIN instead, when set).
bench_release_bin() {
  if [ -n "${THUMBD_BIN:-}" ]; then echo "$THUMBD_BIN"; return; fi
  swift build -c release --product thumbd >/dev/null
  echo "$(swift build -c release --show-bin-path)/thumbd"
}

# Serves DIR on 127.0.0.1:PORT (python3 http.server: 200 for files, 404 otherwise).
bench_origin() {
  bench_bg python3 -m http.server "$2" --bind 127.0.0.1 --directory "$1"
  bench_wait_port "$2"
}

# Starts BIN with the config file CONFIG (stderr to LOG) and waits for its port; pid in BENCH_PID.
bench_daemon() { # BIN CONFIG PORT LOG
  BENCH_LOG=$4 bench_bg "$1" --config "$2"
  bench_wait_port "$3"
}

# Waits up to 15 s for something to accept on 127.0.0.1:PORT.
bench_wait_port() {
  for _ in $(seq 150); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on 127.0.0.1:$1" >&2
  return 1
}

# Starts thumbor EXE (python3's, or a venv's with plugins) on 127.0.0.1:PORT as the
# benchmarks compare against it: 2 processes (= cores), file storage for originals in
# $W/thumbor-storage, no result storage, the http loader, unsafe URLs, QUALITY 82; its
# output to $BENCH_LOG (default /dev/null). Waits for its port. Its pid, that of its own
# process group, in BENCH_THUMBOR; bench_cleanup ends it (bench_end_thumbor).
bench_thumbor() { # EXE PORT
  cat > "$W/thumbor.conf" <<CONF
STORAGE = 'thumbor.storages.file_storage'
FILE_STORAGE_ROOT_PATH = '$W/thumbor-storage'
RESULT_STORAGE = None
LOADER = 'thumbor.loaders.http_loader'
ALLOW_UNSAFE_URL = True
QUALITY = 82
CONF
  # In its own process group (setsid), so cleanup ends its forked processes too, not only the parent.
  setsid "$1" -p "$2" -c "$W/thumbor.conf" --processes 2 -l error >"${BENCH_LOG:-/dev/null}" 2>&1 &
  BENCH_THUMBOR=$!
  bench_wait_port "$2"
}

# Ends bench_thumbor's whole process group, and waits up to 5 s for its processes to finish exiting.
bench_end_thumbor() {
  [ -n "${BENCH_THUMBOR:-}" ] || return 0
  kill -- -"$BENCH_THUMBOR" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 -- -"$BENCH_THUMBOR" 2>/dev/null || break; sleep 0.1; done
}

# Writes to FILE a wrk script that varies one number per request: PATH_FMT (from
# the environment) holds "{N}" where 100 + (counter mod 300) goes; the rest is
# percent-encoded text, so it must not pass through string.format.
bench_vary_lua() { # FILE
  cat > "$1" <<'LUA'
counter = 0
local fmt = os.getenv("PATH_FMT")
local at = string.find(fmt, "{N}", 1, true)
local before, after = string.sub(fmt, 1, at - 1), string.sub(fmt, at + 3)
request = function()
  counter = counter + 1
  return wrk.format("GET", before .. tostring(100 + (counter % 300)) .. after)
end
LUA
}

# One wrk run (1 thread, BENCH_SECONDS, default 10 s): prints "req/s p99ms non-2xx".
bench_wrk() { # URL CONNECTIONS [LUA_FILE]
  local extra=(); [ -n "${3:-}" ] && extra=(-s "$3")
  wrk -t1 -c"$2" -d"${BENCH_SECONDS:-10}s" --latency ${extra[@]+"${extra[@]}"} "$1" | awk '
    /Requests\/sec/ {rps=$2}
    /Non-2xx/ {bad=$NF}
    /^ +99%/ {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; p99=v}
    END {print rps, p99, bad+0}'
}

# Starts SeaweedFS (.venv-s3, which .ci/deps.sh makes) with its S3 API on 127.0.0.1:BASE+6 and
# every other port from BASE to BASE+7 (../shared/notes/seaweedfs.md: every port given,
# telemetry off, small volumes), one identity KEY/SECRET, and makes BUCKET. Sets S3 to the
# curl command line that signs for it. Its gRPC sockets go in /tmp whatever TMPDIR says:
# bench_weed_sockets BASE names them for the cleanup.
bench_weed() { # BASE KEY SECRET BUCKET
  local b=$1
  mkdir -p "$W/weed/data"
  cat > "$W/weed/identities.json" <<JSON
{"identities": [{"name": "bench", "credentials": [{"accessKey": "$2", "secretKey": "$3"}], "actions": ["Admin", "Read", "Write", "List"]}]}
JSON
  TMPDIR="$W/weed" BENCH_LOG="$W/weed.log" bench_bg "$PWD/.venv-s3/bin/weed" -logtostderr=true server -s3 -dir="$W/weed/data" \
    -ip=127.0.0.1 -ip.bind=127.0.0.1 -master.telemetry=false \
    -master.port=$b -master.port.grpc=$((b + 1)) -volume.port=$((b + 2)) -volume.port.grpc=$((b + 3)) \
    -filer.port=$((b + 4)) -filer.port.grpc=$((b + 5)) -s3.port=$((b + 6)) -s3.port.grpc=$((b + 7)) \
    -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.localSocket="$W/weed/s3.sock" -filer.localSocket="$W/weed/filer.sock" -s3.config="$W/weed/identities.json" \
    -volume.max=200 -master.volumeSizeLimitMB=32 -volume.preStopSeconds=0
  S3=(curl -s -o /dev/null -w '%{http_code}' --max-time 20 --aws-sigv4 aws:amz:us-east-1:s3 --user "$2:$3")
  for _ in $(seq 240); do [ "$("${S3[@]}" "http://127.0.0.1:$((b + 6))/" || true)" = 200 ] && break; sleep 0.25; done
  [ "$("${S3[@]}" -X PUT "http://127.0.0.1:$((b + 6))/$4")" = 200 ] || { echo "cannot create the bucket $4" >&2; return 1; }
}

bench_weed_sockets() { # BASE
  local b=$1
  echo /tmp/seaweedfs-master-grpc-$((b + 1)).sock /tmp/seaweedfs-volume-grpc-$((b + 3)).sock \
    /tmp/seaweedfs-filer-grpc-$((b + 5)).sock /tmp/seaweedfs-s3-grpc-$((b + 7)).sock
}
