#!/usr/bin/env bash
# Progressive JPEGs for ProgressiveFastPathTests, from shared/corpus (see ../SOURCES.md):
# libjpeg-turbo-progs 2.1.5 (cjpeg, jpegtran) and ImageMagick 6 (PNG → PPM/PGM only).
# Rerunning gives the same bytes. Usage: ./make-progressive-fixtures.sh [CORPUS]
set -euo pipefail
cd "$(dirname "$0")"
CORPUS=${1:-../../../../../shared/corpus}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
convert "$CORPUS/png/chelsea.png" "$T/chelsea.ppm"
convert "$CORPUS/png/camera.png" -crop 256x256+128+96 +repage "$T/camera.pgm"
# A real photo's coefficients, losslessly: a 320×208 crop of rocket.jpg (4:4:4) made progressive.
jpegtran -crop 320x208+160+104 -progressive -copy none -outfile rocket-444-jpegtran.jpg "$CORPUS/photos/rocket.jpg"
cjpeg -quality 85 -sample 2x2 -progressive -outfile chelsea-420.jpg "$T/chelsea.ppm"
cjpeg -quality 85 -sample 2x1 -progressive -outfile chelsea-422.jpg "$T/chelsea.ppm"
cjpeg -quality 85 -sample 2x2 -progressive -restart 5B -outfile chelsea-420-restart.jpg "$T/chelsea.ppm"
cjpeg -quality 90 -sample 2x2 -scans split.scans -outfile chelsea-420-split.jpg "$T/chelsea.ppm"
cjpeg -quality 90 -sample 1x1 -scans spectral.scans -restart 1 -outfile chelsea-444-spectral.jpg "$T/chelsea.ppm"
cjpeg -quality 90 -sample 2x2 -scans separate-dc.scans -outfile chelsea-420-separate-dc.jpg "$T/chelsea.ppm"
cjpeg -quality 85 -grayscale -progressive -outfile camera-gray.jpg "$T/camera.pgm"
# Four components: the Adobe CMYK fixture (../cmyk.jpg) made progressive.
jpegtran -progressive -copy all -outfile cmyk.jpg ../cmyk.jpg
