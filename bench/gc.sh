#!/bin/sh
# Issue #31 §3: the store stays bounded. Stages and applies PREVIEWS previews (`resolve write`
# then `resolve apply`) round-robin over a tree of FILES files, and at five checkpoints prints
# the size of `.resolve/` before and after `resolve gc` and the time of one `resolve pending`.
#
#   sh bench/gc.sh [PREVIEWS] [FILES] [RESOLVE]     (defaults: 10000 1000 target/release/resolve)
#
# Retention for the run: `--keep-days 0 --keep-entries 1000` (the default entry count; every
# entry here is younger than the default 30 days, which would keep them all). A content no
# record needs is kept for an hour after it is written (a preview writes its contents before
# it is staged), so before each gc the bench ages every stored content by two hours, as a
# day of work would.
set -eu
previews=${1:-10000}
files=${2:-1000}
resolve=$(realpath "${3:-target/release/resolve}")
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
i=0
while [ "$i" -lt "$files" ]; do
    printf 'file %s\n' "$i" > "$root/f$i.txt"
    i=$((i + 1))
done
size() { du -sk "$root/.resolve" | cut -f1; }
millis() { date +%s%3N; }
printf '%8s %14s %13s %14s\n' previews 'KiB before gc' 'KiB after gc' 'pending (ms)'
n=1
step=$((previews / 5))
while [ "$n" -le "$previews" ]; do
    f=$((n % files))
    "$resolve" --root "$root" write "f$f.txt" --content "file $f, version $n
" > /dev/null
    "$resolve" --root "$root" apply --reason "version $n" > /dev/null
    if [ $((n % step)) -eq 0 ]; then
        before=$(size)
        find "$root/.resolve/blobs" -type f -exec touch -d '2 hours ago' {} +
        "$resolve" --root "$root" gc --keep-days 0 --keep-entries 1000 > /dev/null
        after=$(size)
        start=$(millis)
        "$resolve" --root "$root" pending > /dev/null
        end=$(millis)
        printf '%8s %14s %13s %14s\n' "$n" "$before" "$after" "$((end - start))"
    fi
    n=$((n + 1))
done
