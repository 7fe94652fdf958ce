#!/usr/bin/env bash
# Broad against deep crawls of the same procedural universe, side by side (docs/benchmarks.md,
# "Broad crawls"): each SHAPE = ORIGINSxPAGES is a long_crawl run of ORIGINS sites of
# SITE_PAGES pages each (the same page generator, sizes and layouts for every shape), every
# site at its own loopback address on one port (--addresses), the crawl stopping each site at
# PAGES pages (--max-pages-per-host PAGES). ROUNDS rounds run every SHAPE once, the order
# rotating each round; then per SHAPE the medians of pages/s (whole run), peak RSS, text files
# on disk at the last page request, the end-of-crawl pass and store bytes per page, and each
# shape's pages/s and peak RSS against the last SHAPE's.
#
# Usage: benches/long_crawl/broad.sh [ROUNDS] [OUT] [SHAPE...] [-- EXTRA_LONG_CRAWL_ARGS...]
#   defaults: 1 round, OUT=/work/broad-runs/<time>.txt, shapes 10000x10 50x200
#   env: SITE_PAGES (200), PAGE_KB (20), BROAD_DIR (/work/broad-runs): where runs go
#   Build first: cargo bench --bench long_crawl --no-run (BENCH=path overrides the binary).
#
#   benches/long_crawl/broad.sh 3                          # 10,000 x 10 against 50 x 200, 3 rounds
#   benches/long_crawl/broad.sh 1 OUT 100000x10 -- --kill-at 600000   # 1M pages, kill -9, resume
#
# Each run's data directory is removed after the run, its text files only when every round is
# done (deleting many files slows the next run's file creation on this disk: "Reproducing them").
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
root=${BROAD_DIR:-/work/broad-runs}/$(date +%Y%m%d-%H%M%S)
mkdir -p "$root"
rounds=${1:-1}
out=${2:-$root/results.txt}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
shapes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do shapes+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#shapes[@]} -gt 0 ] || shapes=(10000x10 50x200)
site_pages=${SITE_PAGES:-200}
page_kb=${PAGE_KB:-20}
bench=${BENCH:-$(ls -t "$here"/target/release/deps/long_crawl-* 2>/dev/null | grep -v '\.d$' | head -1)}
[ -x "$bench" ] || { echo "no long_crawl binary: cargo bench --bench long_crawl --no-run" >&2; exit 1; }
for shape in "${shapes[@]}"; do
  [[ $shape =~ ^[0-9]+x[0-9]+$ ]] || { echo "SHAPE is ORIGINSxPAGES, not $shape" >&2; exit 2; }
done
echo "broad crawl comparison: ${shapes[*]}, sites of $site_pages pages of ~$page_kb KB, $rounds round(s); runs in $root, results in $out" >&2

n=${#shapes[@]}
for r in $(seq 0 $((rounds - 1))); do
  for j in $(seq 0 $((n - 1))); do
    shape=${shapes[$(( (j + r) % n ))]}
    origins=${shape%x*}
    pages=${shape#*x}
    d="$root/$shape-r$r"
    echo "== round $((r + 1)): $shape ($(date +%T))" >&2
    # The bench exits 1 when a run fails its checks or the crawler fails; keep its RESULT line.
    "$bench" --origins "$origins" --pages "$site_pages" --max-pages-per-host "$pages" \
      --addresses --page-kb "$page_kb" --dir "$d" --keep-data "$@" >"$d.log" 2>&1 || true
    result=$(grep '^RESULT' "$d.log" || echo "RESULT {}")
    echo "$shape $(date +%T) ${result#RESULT }" >> "$out"
    grep -A30 '^long crawl (' "$d.log" | grep -v '^RESULT' >&2 || tail -5 "$d.log" >&2
    rm -rf "$d/data"
  done
done

python3 - "$out" "${shapes[@]}" <<'EOF'
import json, statistics, sys
path, shapes = sys.argv[1], sys.argv[2:]
runs = {s: [] for s in shapes}
for line in open(path):
    shape, _, js = line.rstrip("\n").split(" ", 2)
    if shape in runs:
        runs[shape].append(json.loads(js or "{}"))
def med(shape, key):
    v = [r[key] for r in runs[shape] if r.get(key) is not None]
    return statistics.median(v) if v else None
def fmt(v, spec):
    return "-" if v is None else format(v, spec)
rows = [
    ("pages fetched", "pages_served", ",.0f"),
    ("pages/s, whole run", "pages_per_s_overall", ",.0f"),
    ("peak RSS, MB", "peak_rss_mb", ",.1f"),
    ("text files at the last fetch", "texts_at_last_fetch", ",.0f"),
    ("share of pages with text then", "text_share_at_last_fetch", ".1%"),
    ("end-of-crawl pass, s", "end_of_crawl_pass_s", ",.1f"),
    ("wall, s", "wall_s", ",.1f"),
    ("store bytes per page", "store_bytes_per_page", ",.0f"),
    ("learner backlog max", "learner_backlog_max", ",.0f"),
    ("crawler output lines", "crawler_log_lines", ",.0f"),
]
w = max(len(s) for s in shapes) + 2
print(f"medians of {max(len(v) for v in runs.values())} run(s) ({path})")
print(f"{'':32}" + "".join(f"{s:>{max(w, 14)}}" for s in shapes))
for label, key, spec in rows:
    print(f"{label:32}" + "".join(f"{fmt(med(s, key), spec):>{max(w, 14)}}" for s in shapes))
ref = shapes[-1]
for s in shapes[:-1]:
    a, b = med(s, "pages_per_s_overall"), med(ref, "pages_per_s_overall")
    ra, rb = med(s, "peak_rss_mb"), med(ref, "peak_rss_mb")
    if a and b and ra and rb:
        print(f"{s} against {ref}: pages/s {a / b:.2f}x, peak RSS {ra / rb:.1f}x")
for s in shapes:
    for r in runs[s]:
        if r.get("pages_per_s_overall") is None:
            print(f"{s}: a run without a RESULT (see its .log)")
EOF
