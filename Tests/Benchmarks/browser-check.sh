#!/usr/bin/env bash
# Does a real browser show thumbd's answers? Debian's Chromium, headless, loads a page of
# <img> tags from a thumbd on 127.0.0.1 — every output format asked explicitly, and
# format=auto negotiated with Chromium's own Accept (output.autoFormats [jxl, avif, webp]) —
# and reports each image's naturalWidth (0: the browser could not decode it) and the
# Content-Type thumbd answered with. Everything on 127.0.0.1.
# Usage: Tests/Benchmarks/browser-check.sh BIN   (any directory; installs chromium)
# Exit status 0 when every image decoded at its expected width, 1 otherwise.
set -euo pipefail
BIN=$(realpath "${1:?usage: browser-check.sh BIN}")
cd "$(dirname "$0")/../.."
source Tests/Benchmarks/lib.sh
bash .ci/deps.sh chromium
bench_inputs
bench_init
mkdir "$W/origin"
cp "$INPUTS/jpeg-4mp.jpg" "$W/origin/photo.jpg"
bench_origin "$W/origin" 18400
cat > "$W/thumbd.json" <<CONF
{"listen": "127.0.0.1:18401", "origin": {"allowPrivateNetworks": true},
 "output": {"autoFormats": ["jxl", "avif", "webp"]},
 "diskStore": {"path": "$W/store"}, "log": {"accessLog": false}}
CONF
bench_daemon "$BIN" "$W/thumbd.json" 18401 "$W/thumbd.log"
SRC="http%3A%2F%2F127.0.0.1%3A18400%2Fphoto.jpg"
# The page comes from the daemon's own origin (same host, no mixed content); each image
# names the format it asks for, and the script reports what the browser made of it.
{
  echo '<!doctype html><html><body>'
  for f in jxl avif webp jpeg png auto; do
    echo "<img id=\"$f\" src=\"http://127.0.0.1:18401/thumbnail?url=$SRC&w=200&format=$f\">"
  done
  cat <<'PAGE'
<script>
window.addEventListener('load', () => {
  const out = [...document.images].map(i => i.id + '=' + i.naturalWidth);
  document.title = out.join(' ');
  const p = document.createElement('pre'); p.id = 'result'; p.textContent = out.join('\n');
  document.body.appendChild(p);
});
</script></body></html>
PAGE
} > "$W/origin/page.html"
DOM=$(timeout 120 chromium --headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage \
  --user-data-dir="$W/chromium" --virtual-time-budget=15000 --dump-dom "http://127.0.0.1:18400/page.html" 2>/dev/null)
RESULT=$(echo "$DOM" | sed -n '/<pre id="result">/,/<\/pre>/p' | sed 's/<[^>]*>//g' | grep '=' || true)
# Chromium 156's Accept for images, as it sent it here (issue 37): what format=auto negotiates with.
ACCEPT="image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
echo "chromium: $(chromium --version 2>/dev/null | head -1)"
status=0
for f in jxl avif webp jpeg png auto; do
  width=$(echo "$RESULT" | sed -n "s/^$f=//p")
  accept=""; [ "$f" = auto ] && accept=$ACCEPT
  type=$(curl -s -o /dev/null -w '%{content_type}' -H "Accept: $accept" \
    "http://127.0.0.1:18401/thumbnail?url=$SRC&w=200&format=$f")
  printf '%-5s naturalWidth=%-4s %s\n' "$f" "${width:-?}" "$type"
  [ "${width:-0}" = 200 ] || status=1
done
exit $status
