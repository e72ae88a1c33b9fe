#!/usr/bin/env bash
# Writes the seed corpora of Fuzz/Corpus/ (committed): each target's seeds made by the real
# encoders (`rchat-fuzz --write-corpus`), and the image seeds made by ImageMagick (the
# product only decodes images; libjpeg-turbo and libpng encode them here).
set -euo pipefail
fuzzer=${1:?usage: Fuzz/make-corpus.sh FUZZER}
cd "$(dirname "$0")/.."
rm -rf Fuzz/Corpus
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
python3 - "$images/sideways.jpg" "$images/turned.jpg" <<'PY'
import sys
jpeg = open(sys.argv[1], "rb").read()
exif = b"Exif\0\0" + b"MM\0\x2a\0\0\0\x08" + b"\0\x01" + b"\x01\x12\0\x03\0\0\0\x01\0\x06\0\0" + b"\0\0\0\0"
open(sys.argv[2], "wb").write(jpeg[:2] + b"\xff\xe1" + (len(exif) + 2).to_bytes(2, "big") + exif + jpeg[2:])
PY
rm "$images/sideways.jpg"
convert -size 8x8 gradient:white-black -colorspace Gray -strip -quality 60 "$images/gray.jpg"
