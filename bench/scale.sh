#!/usr/bin/env bash
# Scale check: `resolve` on a generated tree of 100 000 small files (about 1 KiB each, 100 MB
# in all). Measures wall time and peak RSS (`/usr/bin/time -v`) of:
#   1. an ast-edit preview whose pattern matches 1% of the files (1 000 changed),
#   2. applying it,
#   3. a one-file `write` preview and its apply, with the 100 000 files around,
#   4. an ast-edit preview that changes every file (a 100 000-file change set), and its apply,
#   5. the peer: `ast-grep run` printing, then writing (`-U`), the same whole-tree change.
# No step holds file contents (they go to `.resolve/blobs/` as they are computed), and no
# preview holds anything per changed file (the change set is spooled); the apply in (4) still
# holds the change set's metadata (paths and hashes, about 1 KB per file).
#
# Usage: bench/scale.sh [FILES]   (default 100000; the tree goes to a temporary directory)
# Needs: /usr/bin/time (Debian package `time`). Builds the release binary first. The ast-grep
# rows use $AST_GREP, else the virtual environment bench/run.py installs it into; without
# either they are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

files="${1:-100000}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/resolve-bench}"
cargo build --release --quiet -p resolve-cli
bin="$CARGO_TARGET_DIR/release/resolve"

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT

python3 - "$root" "$files" <<'PY'
import os, sys
root, count = sys.argv[1], int(sys.argv[2])
filler = "    // " + "padding " * 12 + "\n"
for i in range(count):
    d = os.path.join(root, "src", f"d{i // 1000:03}")
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    call = "needle" if i % 100 == 0 else "foo"
    body = f"fn f{i}() -> u32 {{\n    let v = {call}({i});\n" + filler * 10 + "    v\n}\n"
    with open(os.path.join(d, f"f{i}.rs"), "w") as f:
        f.write(body)
PY
echo "tree: $files files, $(du -sm "$root/src" | cut -f1) MB"

measure() {
  local label="$1"
  shift
  /usr/bin/time -v -o "$root/time.txt" "$@" >/dev/null 2>"$root/err.txt" || {
    cat "$root/err.txt" >&2
    exit 1
  }
  local rss wall
  rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$root/time.txt")
  wall=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$root/time.txt")
  printf '%-46s %10s  %8.1f MB\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
}

printf '%-46s %10s  %11s\n' "step" "wall" "peak RSS"
measure "ast-edit preview, 1% of files match" \
  "$bin" --root "$root" ast-edit -p 'needle($A)' -r 'found($A)' src
measure "apply (1 000 files)" "$bin" --root "$root" apply --reason "Scale check."
measure "write preview, one file" "$bin" --root "$root" write src/d000/f1.rs --content "fn f1() {}\n"
measure "apply (1 file)" "$bin" --root "$root" apply --reason "Scale check."
measure "ast-edit preview, every file matches" \
  "$bin" --root "$root" ast-edit -p 'foo($A)' -r 'bar($A)' src
measure "apply (every file)" "$bin" --root "$root" apply --reason "Scale check."
grep -rl 'found(' "$root/src" | wc -l | xargs echo "files rewritten by the 1% apply:"

ast_grep="${AST_GREP:-${RESOLVE_BENCH_VENV:-$HOME/.cache/resolve-ci-venv}/bin/ast-grep}"
if [ -x "$ast_grep" ]; then
  # The same whole-tree change again (every `bar(` back to another name), by the peer.
  measure "ast-grep run, every file matches" \
    "$ast_grep" run -l rust -p 'bar($A)' -r 'baz($A)' "$root/src"
  measure "ast-grep run -U (every file)" \
    "$ast_grep" run -l rust -p 'bar($A)' -r 'baz($A)' -U "$root/src"
else
  echo "ast-grep rows skipped: no $ast_grep (python3 bench/run.py installs it)"
fi
