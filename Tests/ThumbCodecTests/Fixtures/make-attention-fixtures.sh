#!/usr/bin/env bash
# Makes photos/*.jpg (real photographs from shared/corpus, downscaled) and
# photos/vips-attention.txt (libvips' attention crop of each), for
# AttentionCorpusTests. Needs libvips-tools (vips, vipsthumbnail; 8.14.1 made the files).
# Run from anywhere: ./make-attention-fixtures.sh [CORPUS]   (CORPUS: ../../../../shared/corpus by default)
set -euo pipefail
cd "$(dirname "$0")"
corpus=${1:-../../../../shared/corpus}

mkdir -p photos
rm -f photos/*.jpg
# At most 640 px on the long side (never enlarged), JPEG q85, metadata stripped.
for f in "$corpus"/photos/*.jpg "$corpus"/png/{astronaut,camera,chelsea,coffee}.png; do
  name=$(basename "${f%.*}")
  vipsthumbnail "$f" -s '640x640>' -o "$PWD/photos/$name.jpg[Q=85,strip]"
done

# libvips' attention strategy on each, with the window thumbd's test compares:
# a square of the photo's short side (the crop of a square thumbnail).
{
  echo "# $(vips --version): vips smartcrop PHOTO out.v S S --interesting attention --attention-x --attention-y"
  echo "# S is the short side; left/top = clamp(attention − S/2, 0, side − S), as smartcrop.c places its window."
  echo "# photo width height S attention-x attention-y left top"
  for f in photos/*.jpg; do
    w=$(vipsheader -f width "$f"); h=$(vipsheader -f height "$f"); s=$(( w < h ? w : h ))
    read -r ax ay < <(vips smartcrop "$f" /tmp/attention-$$.v $s $s --interesting attention --attention-x --attention-y | tr '\n' ' '; echo)
    clamp() { local v=$1; (( v < 0 )) && v=0; (( v > $2 )) && v=$2; echo $v; }
    echo "$(basename "$f") $w $h $s $ax $ay $(clamp $(( ax - s / 2 )) $(( w - s ))) $(clamp $(( ay - s / 2 )) $(( h - s )))"
  done
} > photos/vips-attention.txt
rm -f /tmp/attention-$$.v
