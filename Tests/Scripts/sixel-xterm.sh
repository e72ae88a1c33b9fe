#!/bin/sh
# Draws a received photo's sixel preview in a real xterm (Xvfb), at two font sizes, and
# takes a screenshot of each: look at them (the header on the top row, the status bar and
# the composer on the last two, the picture inside its box under the photo's line).
#
#   Tests/Scripts/sixel-xterm.sh [OUTDIR]     (after `swift build`; needs xvfb, xterm,
#                                              imagemagick, fonts-dejavu-core)
#
# Every process it starts is stopped by its PID when it ends.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${RCHAT_BIN:-$repo/.build/debug}
out=${1:-$PWD/sixel-xterm-shots}
mkdir -p "$out"
work=$(mktemp -d)
pids=""
cleanup() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    for pid in $pids; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
rchat() { who=$1; shift; "$bin/rchat" "$@" --home "$work/$who-home" --device-dir "$work/$who-device"; }

"$bin/rchat-relay" --listen 127.0.0.1:0 --key-file "$work/relay.key" > "$work/relay.out" 2> "$work/relay.err" &
pids="$pids $!"
for _ in $(seq 100); do grep -q '^relay ' "$work/relay.out" 2>/dev/null && break; sleep 0.1; done
relay=$(sed -n 's/^relay //p' "$work/relay.out")
for who in alice sam; do
    rchat $who init --name "$who" --relay "$relay" > /dev/null
    rchat $who settings receipt-window-ms 0 > /dev/null
done
rchat alice add "$(rchat sam code | head -1)" > /dev/null
rchat sam add "$(rchat alice code | head -1)" > /dev/null
rchat alice settings desktop-alerts off > /dev/null
# Red on top, blue below: any red or blue pixel outside the box is the preview overflowing.
convert -size 320x240 xc:red \( -size 320x240 xc:blue \) -append "$work/beach.png"
rchat sam send Alice --file "$work/beach.png" > /dev/null
# Started directly (not through the function above), so $! is its own PID.
"$bin/rchat" sync --seconds 300 --home "$work/sam-home" --device-dir "$work/sam-device" > /dev/null 2>&1 &
pids="$pids $!"

# A free display, chosen by Xvfb itself (-displayfd: it writes the number once it listens).
Xvfb -displayfd 3 -screen 0 1280x1024x24 -nolisten tcp 3>"$work/display" >"$work/xvfb.log" 2>&1 &
xvfb=$!
pids="$pids $xvfb"
for _ in $(seq 100); do [ -s "$work/display" ] && break; kill -0 "$xvfb" 2>/dev/null || break; sleep 0.1; done
[ -s "$work/display" ] || { echo "sixel-xterm: Xvfb did not start (see $work/xvfb.log)" >&2; exit 1; }
display=":$(head -1 "$work/display")"

for size in 14 8; do
    DISPLAY=$display LANG=C.UTF-8 RCHAT_GRAPHICS=sixel xterm -ti vt340 -fa 'DejaVu Sans Mono' -fs $size -geometry 100x30+0+0 \
        -e "$bin/rchat" --home "$work/alice-home" --device-dir "$work/alice-device" --open sam &
    term=$!
    pids="$pids $term"
    # Until the picture is on the screen (some pure red in the shot), 30 s at most.
    for _ in $(seq 150); do
        DISPLAY=$display import -window root "$out/xterm-fs$size.png" 2>/dev/null || true
        red=$(convert "$out/xterm-fs$size.png" -fill black +opaque red -fill white -opaque red -format '%[fx:mean>0]' info: 2>/dev/null || echo 0)
        [ "$red" = 1 ] && break
        sleep 0.2
    done
    kill "$term" 2>/dev/null || true
    wait "$term" 2>/dev/null || true
    # The view, ended with its terminal, leaves `rchat linger` (about 30 s): stopped by the
    # PID it writes, which it removes as it ends.
    pidfile="$work/alice-home/linger.pid"
    for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.1; done
    if [ -s "$pidfile" ]; then
        linger=$(cat "$pidfile")
        kill "$linger" 2>/dev/null || true
        for _ in $(seq 100); do [ -e "$pidfile" ] || break; sleep 0.1; done
    fi
    echo "$out/xterm-fs$size.png"
done
