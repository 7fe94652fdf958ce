#!/usr/bin/env bash
# Alternated runs of the crawl benchmark (benches/crawl.rs), for comparing settings or binaries
# on this noisy shared machine: ROUNDS rounds, each running every SPEC once in the order given,
# then the median pages/s, crawler CPU and peak RSS per SPEC (docs/benchmarks.md, "Reproducing them").
#
# Usage: benches/crawl/ab.sh ROUNDS OUT SPEC... [-- EXTRA_BENCH_ARGS...]   (order rotates per round)
#   SPEC = LABEL=off|on[,bin=PATH][,arg=FLAG][,env=K=V]   (on/off: --inline-clean; arg and env
#          may repeat; arg takes one word, e.g. arg=--warc)
#   OUT  = file the RESULT lines are appended to (one per run, with the label and the time)
#   Build first: cargo bench --bench crawl --no-run (BENCH=path overrides the binary found).
#
# Each run gets its own directory under $AB_DIR (default /work/ab-runs); its data directory is
# removed after the run, its text files only when every round is done. Deleting thousands of
# files right before a run slowed the next run's file creation by up to 2x here: ext4 without a
# journal skips inodes deleted in the last 60-360 s (`recently_deleted` in the kernel profile).
# (The bench's own --settle wait keys on a stamp in $TMPDIR, which a fresh TMPDIR per run never
# has; this script passes --settle 0s: nothing was removed.) Do not start it within ~6 minutes
# of deleting a large tree either.
set -euo pipefail
rounds=$1
out=$2
shift 2
specs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do specs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
here=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BENCH:-$(ls -t "$here"/target/release/deps/crawl-* 2>/dev/null | grep -v '\.d$' | head -1)}
[ -x "$bench" ] || { echo "no crawl benchmark binary: cargo bench --bench crawl --no-run" >&2; exit 1; }
root=${AB_DIR:-/work/ab-runs}/$(date +%s)
mkdir -p "$root"
# Round r runs the SPECs rotated by r: the first run of a round was faster here (the
# same two builds measured -4.7 % one way round and +0.8 % the other), so each SPEC takes each
# place in turn.
n=${#specs[@]}
for r in $(seq 0 $((rounds - 1))); do
  for j in $(seq 0 $((n - 1))); do
    spec=${specs[$(( (j + r) % n ))]}
    label=${spec%%=*}
    rest=${spec#*=}
    mode=${rest%%,*}
    args=()
    envs=()
    IFS=',' read -ra parts <<< "${rest#"$mode"}"
    for p in "${parts[@]}"; do
      case $p in
        bin=*) args+=(--bin "${p#bin=}") ;;
        arg=*) args+=("${p#arg=}") ;;
        env=*) envs+=("${p#env=}") ;;
        "") ;;
        *) echo "unknown SPEC part: $p" >&2; exit 2 ;;
      esac
    done
    d=$(mktemp -d "$root/run-XXXX")
    result=$(env ${envs[@]+"${envs[@]}"} TMPDIR="$d" THRESHER_LEARN_STATS=1 "$bench" --settle 0s \
      --inline-clean "$mode" ${args[@]+"${args[@]}"} "$@" --keep "$d/k" 2>&1 | grep '^RESULT' || true)
    echo "$label $(date +%T) $result" >> "$out"
    rm -rf "$d/k/data"
  done
done
python3 - "$out" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    label, _, rest = line.partition(" ")
    if "{" not in rest:
        print(f"{label}: a run failed: {line.strip()}")
        continue
    r = json.loads(rest[rest.index("{"):])
    runs.setdefault(label, []).append(r)
for label, rs in runs.items():
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"{label}: {len(rs)} runs; pages/s {[round(r['pages_per_s']) for r in rs]} "
          f"median {med('pages_per_s'):.0f}; crawler CPU median {med('crawler_cpu_s'):.1f} s; "
          f"peak RSS median {med('peak_rss_mb'):.0f} MB")
EOF
echo "run directories (text files kept): $root — remove it when you are done measuring"
