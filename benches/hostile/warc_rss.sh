#!/usr/bin/env bash
# Peak RSS of `thresher clean --warc` on the issue-10 WARC (100 records × 16 MB of HTML).
# Usage: benches/hostile/warc_rss.sh [THRESHER_BIN] [HOSTS...]   (default: release build; 1 10)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../target/release/thresher}
shift || true
hosts=("${@:-1 10}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for h in ${hosts[@]}; do
  python3 "$here/warc_gen.py" "$work/w.warc.gz" 100 "$h"
  rm -rf "$work/out"
  /usr/bin/time -v "$bin" clean --warc "$work/w.warc.gz" --out "$work/out" -q 2>"$work/time" >/dev/null
  printf '%3s host(s), %s: %s MB peak RSS, %s wall\n' "$h" "$(du -h "$work/w.warc.gz" | cut -f1)" \
    "$(awk '/Maximum resident/ {print int($6/1024)}' "$work/time")" \
    "$(awk -F': ' '/Elapsed/ {print $2}' "$work/time")"
done
