#!/usr/bin/env bash
# Screenshots of the real view in a real xterm under Xvfb, to look at what a person sees:
# the status glyphs (not empty boxes) and colours that read on xterm's default white
# background and on black, in DejaVu Sans Mono and in xterm's own misc-fixed font.
#
#   Tests/Scripts/xterm-screenshot.sh [OUT_DIR]      (default $TMPDIR/rchat-screenshots, TMPDIR /tmp if unset)
#
# It runs `rchat demo` (RCHAT, default .build/debug/rchat) in a tmux session of its own,
# sends Sam messages until the conversation shows Read, Sent, Not delivered and Failed to
# send, and takes two pictures in each xterm: the conversation, and the help overlay's
# Statuses legend (all seven, drawn as a message line draws them). Once with TERM=xterm
# (8 colours, Debian xterm's default) and once with TERM=xterm-256color. Writes
# OUT_DIR/<term>-<font>-<background>-{conversation,legend}.png and prints their paths; beside
# each legend its text (-legend.txt), the xterm window's place (.geometry, from xwininfo) and
# a picture of two characters no installed font has, U+24E5 and U+23F1 (-tofu.png: how this
# font draws a missing glyph), which XtermScreenshotTests compares the legend's glyphs with.
# TERMS (default "xterm xterm-256color") chooses the terminal types.
# Stops only what it started (Xvfb, xterm, its tmux server), by PID.
# Needs: Xvfb, xterm, tmux, ImageMagick's `import`, xwininfo, and the fonts of `make deps`.
set -euo pipefail
export LANG=C.UTF-8 LC_ALL=C.UTF-8
cd "$(dirname "$0")/../.."
out=${1:-${TMPDIR:-/tmp}/rchat-screenshots}
rchat=${RCHAT:-.build/debug/rchat}
for tool in Xvfb xterm tmux import xwininfo; do
  command -v "$tool" >/dev/null || { echo "xterm-screenshot: $tool is not installed" >&2; exit 2; }
done
[ -x "$rchat" ] || { echo "xterm-screenshot: $rchat is not built (swift build)" >&2; exit 2; }
rchat=$(cd "$(dirname "$rchat")" && pwd)/$(basename "$rchat")
mkdir -p "$out"
work=$(mktemp -d -t rchat-shot.XXXXXX)
socket="$work/tmux.sock"
xvfb=""; xterm_pid=""; tmux_pid=""

tmx() { tmux -S "$socket" -f /dev/null "$@"; }

cleanup() {
  [ -n "$xterm_pid" ] && kill "$xterm_pid" 2>/dev/null || true
  [ -n "$tmux_pid" ] && kill "$tmux_pid" 2>/dev/null || true
  [ -n "$xvfb" ] && kill "$xvfb" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Polls `$@` every 0.1 s for up to $seconds; fails with what it waited for.
seconds=20
until_true() {
  local what=$1; shift
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if [ $SECONDS -ge $deadline ]; then
      echo "xterm-screenshot: timed out waiting for $what" >&2
      tmx capture-pane -p -t shot 2>/dev/null >&2 || true
      return 1
    fi
    sleep 0.1
  done
}
# Takes the picture once the X server has painted: three looks in a row the same.
shoot() {
  local file=$1 prev="" same=0 deadline=$((SECONDS + 10)) now
  while [ $same -lt 2 ] && [ $SECONDS -lt $deadline ]; do
    now=$(import -window root -depth 8 rgb:- | md5sum)
    if [ "$now" = "$prev" ]; then same=$((same + 1)); else same=0; fi
    prev=$now
    sleep 0.2
  done
  import -window root "$file"
}
screen_has() { tmx capture-pane -p -t shot | grep -qF -- "$1"; }
line_ends_with() { tmx capture-pane -p -t shot | grep -F -- "$1" | grep -qE -- "$2 *\$"; }
typed() { tmx send-keys -t shot -l -- "$1"; tmx send-keys -t shot Enter; }

# A free display, chosen by Xvfb itself (-displayfd: it writes the number when it listens).
Xvfb -displayfd 3 -screen 0 1280x720x24 -nolisten tcp 3>"$work/display" >"$work/xvfb.log" 2>&1 &
xvfb=$!
until_true "Xvfb to listen" test -s "$work/display"
display=$(head -1 "$work/display")
export DISPLAY=":$display"

for term in ${TERMS:-xterm xterm-256color}; do
  # The demo in a tmux session of its own, as wide as the xterm below.
  # (TERM through env: tmux sets its own over -e.)
  tmx new-session -d -s shot -x 100 -y 30 env TERM="$term" LANG=C.UTF-8 "$rchat" demo
  tmx set-option -g status off
  tmux_pid=$(tmx display-message -p '#{pid}')
  tmx new-session -d -s ref -x 100 -y 30 sh -c "printf '\342\223\245 \342\217\261\n'; exec sleep 600"
  until_true "the demo's view" screen_has "Message Sam"
  # The demo asks nothing about desktop alerts (its folder is deleted on quit).
  # Read: Sam's demo device reads what it is sent.
  typed "hello Sam"
  until_true "hello Sam shown" screen_has "hello Sam"
  read_shown() { tmx capture-pane -e -p -t shot | grep -F "hello Sam" | grep -qE $'\e\\[([0-9]+;)*7(;[0-9;]*)?m'; }
  until_true "hello Sam Read (reversed)" read_shown
  # Sent: held at the relay while Sam is offline; then Not delivered on his new phone.
  typed "/offline"
  typed "held for the old phone"
  until_true "held for the old phone Sent" line_ends_with "held for the old phone" "(√|v)"
  typed "/newphone"
  until_true "Not delivered" screen_has "Not delivered"
  # Failed to send: to a blocked contact.
  typed "/block"
  typed "to a blocked contact"
  until_true "Failed to send" screen_has "Failed to send"
  typed "/unblock"

  for font in dejavu fixed; do
    for background in white black; do
      args=(-geometry 100x30+0+0 -tn "$term")
      [ "$font" = dejavu ] && args+=(-fa "DejaVu Sans Mono" -fs 12)
      [ "$background" = black ] && args+=(-bg black -fg white)
      name="$out/$term-$font-$background"
      tmx send-keys -t shot Escape
      xterm "${args[@]}" -e tmux -S "$socket" -f /dev/null attach -t shot &
      xterm_pid=$!
      until_true "the xterm client" sh -c "[ \$(tmux -S '$socket' list-clients -t shot | wc -l) -ge 1 ]"
      shoot "$name-conversation.png"
      tmx send-keys -t shot F1
      until_true "the help overlay" screen_has "Help"
      for _ in 1 2 3 4 5 6; do tmx send-keys -t shot NPage; done
      until_true "the legend" screen_has "Statuses"
      shoot "$name-legend.png"
      tmx capture-pane -p -t shot >"$name-legend.txt"
      xwininfo -root -children | grep -F '("xterm" "XTerm")' | grep -oE '[0-9]+x[0-9]+\+[0-9]+\+[0-9]+' | head -1 >"$name.geometry"
      tmx switch-client -c "$(tmx list-clients -t shot -F '#{client_name}' | head -1)" -t ref
      until_true "the reference characters" sh -c "tmux -S '$socket' list-clients -t ref | grep -q ."
      shoot "$name-tofu.png"
      tmx send-keys -t shot Escape
      kill "$xterm_pid"; wait "$xterm_pid" 2>/dev/null || true; xterm_pid=""
      echo "$name-conversation.png"
      echo "$name-legend.png"
    done
  done
  tmx send-keys -t shot C-q
  until_true "the demo to quit" sh -c "! tmux -S '$socket' has-session -t shot 2>/dev/null"
  kill "$tmux_pid" 2>/dev/null || true; tmux_pid=""   # and the reference session's sleep
done
