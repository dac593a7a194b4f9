#!/usr/bin/env bash
# The floor under the shared store's requests (issue 25, Results.md § The shared originals store):
# the CPU that curl's own command line spends on each kind of request a shared-store miss makes,
# against one SeaweedFS on 127.0.0.1, ROUNDS x N requests of each kind in one curl process over
# one kept-alive connection, signed as thumbd signs them (SigV4): a PUT of the 4 MP JPEG of
# make-inputs.sh, a PUT of a sidecar-sized JSON, a GET that finds nothing.
# CPU is curl's user + system time from /usr/bin/time (10-ms ticks: N=200 reads 0.05 ms a request).
# Usage: Tests/Benchmarks/store-floor.sh [N] [ROUNDS]   (default 200, 2)
set -euo pipefail
N=${1:-200}; ROUNDS=${2:-2}
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bash .ci/deps.sh
bench_inputs
bench_init
trap 'bench_cleanup; rm -f $(bench_weed_sockets 18380)' EXIT
KEY=bench-key; SECRET=bench-secret-$RANDOM$RANDOM
bench_weed 18380 "$KEY" "$SECRET" fleet
cp "$INPUTS/jpeg-4mp.jpg" "$W/photo.jpg"
python3 -c 'import json; print(json.dumps({"url": "http://127.0.0.1:18388/h1.jpg", "etag": "\"abc\"", "fetchedAt": 1764300000,
  "length": 419000, "sha256": "0" * 64, "address": "127.0.0.1", "facts": {"width": 2048, "height": 2048, "thumbhash": "x" * 40}}))' \
  > "$W/sidecar.json"
put_original() { printf 'url = "http://127.0.0.1:18386/fleet/o/%s"\nupload-file = "%s"\n' "$1" "$W/photo.jpg"; }
put_sidecar() { printf 'url = "http://127.0.0.1:18386/fleet/o/%s.json"\nupload-file = "%s"\n' "$1" "$W/sidecar.json"; }
get_missing() { printf 'url = "http://127.0.0.1:18386/fleet/missing/%s.json"\n' "$1"; }
measure() { # LABEL MAKER
  : > "$W/curl.cfg"
  for i in $(seq "$N"); do "$2" "$i" >> "$W/curl.cfg"; done
  /usr/bin/time -f "%U %S" -o "$W/time" curl -s --aws-sigv4 "aws:amz:us-east-1:s3" --user "$KEY:$SECRET" -K "$W/curl.cfg" >/dev/null
  read -r user system < "$W/time"
  python3 -c "import sys; u, s, n = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]); \
print(f'{sys.argv[1]}: {(u + s) / n * 1000:.3f} ms CPU a request (user {u / n * 1000:.3f}, system {s / n * 1000:.3f})')" \
    "$1" "$user" "$system" "$N"
}
for _ in $(seq "$ROUNDS"); do
  measure "PUT of the original" put_original
  measure "PUT of a sidecar" put_sidecar
  measure "GET that finds nothing" get_missing
done
