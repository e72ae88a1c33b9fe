#!/usr/bin/env bash
# Writes the seed corpora of Fuzz/Corpus/ (committed): each target's seeds made by the real
# encoders (`rchat-fuzz --write-corpus`), and the image seeds made by ImageMagick (the
# product only decodes images; libjpeg-turbo and libpng encode them here).
set -euo pipefail
fuzzer=${1:?usage: Fuzz/make-corpus.sh FUZZER}
cd "$(dirname "$0")/.."
# The seeds only: an input that once crashed (crash-*) stays, as the regression it is.
find Fuzz/Corpus -name "seed-*" -delete 2>/dev/null || true
"$fuzzer" --write-corpus Fuzz/Corpus
images=Fuzz/Corpus/image
mkdir -p "$images"
convert -size 8x6 gradient:red-blue -strip "$images/gradient.png"
convert -size 5x7 gradient:white-black -colorspace Gray -strip "$images/gray.png"
convert -size 6x6 xc:none -fill '#00ff0080' -draw 'rectangle 1,1 4,4' -strip "$images/alpha.png"
convert -size 9x5 gradient:yellow-green -strip PNG8:"$images/palette.png"
convert -size 8x8 gradient:red-blue -strip -quality 60 "$images/gradient.jpg"
convert -size 8x8 gradient:red-blue -strip -interlace JPEG -quality 60 "$images/progressive.jpg"
# A photo stored sideways, as phones store them: an EXIF APP1 segment saying orientation 6.
convert -size 6x4 gradient:red-blue -strip -quality 60 "$images/sideways.jpg"
{ head -c 2 "$images/sideways.jpg"
  printf '\xff\xe1\x00\x22Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00\x00\x00\x00\x00'
  tail -c +3 "$images/sideways.jpg"; } > "$images/turned.jpg"
rm "$images/sideways.jpg"
convert -size 8x8 gradient:white-black -colorspace Gray -strip -quality 60 "$images/gray.jpg"
