#!/usr/bin/env bash
# thresher against the pipeline a user would otherwise build — wget2 to fetch a site, then
# trafilatura on the saved pages — on the same procedural universe (benches/universe/), side
# by side in one run, alternated: wall time, CPU and peak RSS of each (issue 11).
#
#   benches/pipeline.sh [RUNS=3] [ORIGINS=50] [PAGES=200] [PAGE_KB=20]
#
# Needs wget2 (`apt-get install wget2`) and trafilatura (`pip install trafilatura lxml_html_clean`:
# newer lxml moved the cleaner trafilatura imports into its own package) on PATH,
# and GNU time at /usr/bin/time. Prints one line per run and tool, then the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}; ORIGINS=${2:-50}; PAGES=${3:-200}; PAGE_KB=${4:-20}
for tool in wget2 trafilatura /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "pipeline.sh: $tool is missing" >&2; exit 2; }
done
cargo build --release --quiet
cargo bench --bench long_crawl --no-run --quiet 2>/dev/null
BENCH=$(ls -t target/release/deps/long_crawl-* | grep -v '\.d$' | head -1)
WORK=$(mktemp -d /tmp/pipeline.XXXX)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT

"$BENCH" --origins "$ORIGINS" --pages "$PAGES" --page-kb "$PAGE_KB" --serve-for 4h \
  --dir "$WORK" >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 100); do grep -q SERVING "$WORK/server.log" 2>/dev/null && break; sleep 0.1; done
grep -v '^#' "$WORK/seeds.txt" >"$WORK/urls.txt"
echo "universe: $ORIGINS origins × $PAGES pages × ~$PAGE_KB KB ($((ORIGINS * PAGES)) pages)"

# /usr/bin/time's "wall user sys maxrss_kb" for a command; its output goes to $WORK/LABEL.log.
timed() {
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/$label.time" "$@" >"$WORK/$label.log" 2>&1 || {
    echo "$label failed; see its log:" >&2; tail -5 "$WORK/$label.log" >&2; exit 1; }
  cat "$WORK/$label.time"
}

declare -a T_WALL T_CPU T_RSS P_WALL P_CPU P_RSS
for run in $(seq "$RUNS"); do
  rm -rf "$WORK/data" "$WORK/out" "$WORK/wget" "$WORK/traf"
  # thresher: crawl and clean (inline cleaning on, the default), delay 0 as the others.
  printf '[crawl]\nmax_pages_per_host = %d\n' $((PAGES * 2 + 10)) >"$WORK/thresher.toml"
  read -r w u s m < <(timed thresher target/release/thresher crawl --seeds "$WORK/seeds.txt" \
    --config "$WORK/thresher.toml" --data "$WORK/data" --out "$WORK/out" --delay 0ms \
    --concurrency 64 --max-pages 0 --max-depth 1000 --quiet)
  texts=$(find "$WORK/out" -name '*.txt' | wc -l)
  T_WALL+=("$w"); T_CPU+=("$(echo "$u + $s" | bc)"); T_RSS+=("$((m / 1024))")
  echo "run $run thresher: ${w} s wall, $(echo "$u + $s" | bc) s CPU, $((m / 1024)) MB peak RSS, $texts text files"
  # wget2 (fetch only, recursive, same concurrency), then trafilatura over the saved pages.
  # One wget2 per origin (its directories are named by host without the port), 8 at once with
  # 8 threads each (64 connections, as thresher's --concurrency); images skipped (the universe
  # names files it does not serve); exit 8 is wget2's "some server answered an error".
  read -r w1 u1 s1 m1 < <(timed wget2 xargs -P 8 -I URL bash -c '
      dir="$0/$(printf %s "URL" | tr -c "0-9\n" _)"
      wget2 --quiet --recursive --level=inf --no-parent --max-threads=8 \
        --reject-regex "\.(jpe?g|png|gif|svg|css|js)$" --directory-prefix="$dir" "URL"
      rc=$?; [ "$rc" -eq 0 ] || [ "$rc" -eq 8 ]' "$WORK/wget" <"$WORK/urls.txt")
  pages=$(find "$WORK/wget" -type f ! -name '*.xml' ! -name 'robots.txt' | wc -l)
  find "$WORK/wget" \( -name '*.xml' -o -name robots.txt \) -delete
  read -r w2 u2 s2 m2 < <(timed traf trafilatura --input-dir "$WORK/wget" \
    --output-dir "$WORK/traf" --parallel 2)
  traf=$(find "$WORK/traf" -type f | wc -l)
  w=$(echo "$w1 + $w2" | bc); c=$(echo "$u1 + $s1 + $u2 + $s2" | bc)
  m=$(( (m1 > m2 ? m1 : m2) / 1024 ))
  P_WALL+=("$w"); P_CPU+=("$c"); P_RSS+=("$m")
  echo "run $run wget2 + trafilatura: ${w} s wall (wget2 ${w1} s, trafilatura ${w2} s), ${c} s CPU, ${m} MB peak RSS (the larger of the two), $pages pages fetched, $traf text files"
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "medians of $RUNS runs:"
echo "  thresher             $(median "${T_WALL[@]}") s wall, $(median "${T_CPU[@]}") s CPU, $(median "${T_RSS[@]}") MB peak RSS"
echo "  wget2 + trafilatura  $(median "${P_WALL[@]}") s wall, $(median "${P_CPU[@]}") s CPU, $(median "${P_RSS[@]}") MB peak RSS"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
