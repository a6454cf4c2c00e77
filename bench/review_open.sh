#!/bin/sh
# Issue #31 §4: the review UI opens anything. Stages one preview (`resolve patch`) of FILES
# files with HUNKS hunks each (60-line files, one changed line every 10 lines), then starts
# `resolve review` in a private 200×50 tmux session and prints the time from the start until
# the screen shows the first hunk under the cursor, and the time of 100 `J` (next file) after
# that until the cursor is on file 100 (with more than 100 files).
#
#   sh bench/review_open.sh [FILES] [HUNKS] [RESOLVE]   (defaults: 2000 5 target/release/resolve)
set -eu
files=${1:-2000}
hunks=${2:-5}
resolve=$(realpath "${3:-target/release/resolve}")
root=$(mktemp -d)
socket="resolve-bench-$$"
trap 'tmux -L "$socket" kill-server 2>/dev/null || true; rm -rf "$root"' EXIT
mkdir "$root/d"
python3 - "$root" "$files" "$hunks" <<'PY'
import sys
root, files, hunks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
patch = ["*** Begin Patch"]
for f in range(files):
    name = f"d/f{f:05}.txt"
    with open(f"{root}/{name}", "w") as out:
        out.write("".join(f"{name} line {n}\n" for n in range(1, 10 * hunks + 11)))
    patch.append(f"*** Update File: {name}")
    for h in range(hunks):
        n = h * 10 + 5
        patch += ["@@", f" {name} line {n - 1}", f"-{name} line {n}", f"+{name} LINE {n}", f" {name} line {n + 1}"]
patch.append("*** End Patch")
with open(f"{root}/large.patch", "w") as out:
    out.write("\n".join(patch) + "\n")
PY
"$resolve" --root "$root" patch "$root/large.patch" > /dev/null
rm "$root/large.patch"
millis() { date +%s%3N; }
wait_for() {
    while ! tmux -L "$socket" capture-pane -p -t bench | grep -qF "$1"; do
        sleep 0.01
    done
}
start=$(millis)
tmux -L "$socket" -f /dev/null new-session -d -s bench -x 200 -y 50 "'$resolve' --root '$root' review; sleep 600"
wait_for "▶ d/f00000.txt#1"
opened=$(millis)
moves=-
if [ "$files" -gt 100 ]; then
    tmux -L "$socket" send-keys -t bench -l "$(printf 'J%.0s' $(seq 100))"
    wait_for "▶ d/f00100.txt#1"
    moves=$(($(millis) - opened))
fi
printf '%6s files %6s hunks: first screen %6s ms; 100 x J %6s ms\n' \
    "$files" "$((files * hunks))" "$((opened - start))" "$moves"
