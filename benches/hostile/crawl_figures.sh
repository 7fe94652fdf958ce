#!/usr/bin/env bash
# The issue-10 crawl figures: peak RSS, wall time and CPU of `thresher crawl` against local sites
# (benches/hostile/crawl_server.py, 127.0.0.1 only), each case run RUNS times; prints one line
# per run and the median per case.
#
# Usage: [CRAWL_ENV="VAR=VALUE …"] benches/hostile/crawl_figures.sh [THRESHER_BIN] [RUNS] [CASE...]
#   (CRAWL_ENV: environment for the crawl only, e.g. glibc malloc settings)
#   defaults: target/release/thresher, 3 runs, every case. Cases:
#   links1     one site whose `/` is a 4.95 MB page with 230,000 distinct links (--max-pages 50)
#   links3     three such sites, one seed each (--max-pages 50)
#   seeds100k  100,000 seeds over 4 local sites (--max-pages 50)
#   sitemap    robots.txt `Sitemap:` -> one urlset of 50,000 <loc>s (--max-pages 50)
#   load100k, load200k   N seeds over 4 local sites, --max-pages 1: "first" is the time from
#              the start to the first request any site received
#   distinct100k, distinct200k   the same with every seed on its own origin: the first on a
#              local site, the others on 127.0.0.0/8 addresses where nothing listens; stopped
#              with SIGINT after 30 s (the run would wait out every origin's robots.txt
#              retries): only "first" is a figure here
#   wait       seeds = a port where nothing listens + a site of 200 pages; robots.error_retry
#              20s and unreachable_retries 3 (about 60 s of waiting): CPU (user+sys) over wall
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "${1:-$here/../../target/release/thresher}")
runs=${2:-3}
shift 2 || shift $# || true
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(links1 links3 seeds100k sitemap load100k load200k distinct100k distinct200k wait)
work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

start_server() { # CASE SITES
  rm -f "$work/ports" "$work/first"
  python3 "$here/crawl_server.py" "$1" "$2" "$work/ports" "$work/first" &
  server=$!
  for _ in $(seq 600); do [ -f "$work/ports" ] && return; sleep 0.1; done
  echo "server did not start" >&2; exit 1
}
stop_server() { kill "$server"; wait "$server" 2>/dev/null || true; server=; }

seeds_over_sites() { # N: N seeds spread over the sites in $work/ports
  python3 - "$1" "$work/ports" >"$work/seeds" <<'EOF'
import sys
n, ports = int(sys.argv[1]), open(sys.argv[2]).read().split()
for i in range(n):
    print(f"http://127.0.0.1:{ports[i % len(ports)]}/seed{i}")
EOF
}

seeds_distinct() { # N: the first seed on the local site, the others each on its own origin
  python3 - "$1" "$work/ports" >"$work/seeds" <<'EOF'
import sys
n, port = int(sys.argv[1]), open(sys.argv[2]).read().split()[0]
print(f"http://127.0.0.1:{port}/seed0")
for i in range(1, n):
    print(f"http://127.{2 + i // 65536}.{i // 256 % 256}.{i % 256}:{port}/")
EOF
}

dead_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

crawl() { # MAX_PAGES [CONFIG] [STOP_AFTER]: one timed crawl of $work/seeds; appends a result
  # line. With STOP_AFTER (seconds) the crawl gets SIGINT then and only "first" is meaningful.
  rm -rf "$work/data" "$work/out"
  local cfg=() stop=()
  [ -n "${2:-}" ] && cfg=(--config "$2")
  [ -n "${3:-}" ] && stop=(timeout -s INT "$3")
  local t0
  t0=$(python3 -c 'import time; print(f"{time.time():.3f}")')
  "${stop[@]}" /usr/bin/time -v env ${CRAWL_ENV:-} "$bin" crawl --seeds "$work/seeds" --data "$work/data" \
    --out "$work/out" --delay 0 --max-pages "$1" "${cfg[@]}" -q >"$work/stdout" 2>"$work/time" \
    || [ -n "${3:-}" ] || { echo "crawl failed:" >&2; tail -20 "$work/time" >&2; exit 1; }
  local first=-
  [ -f "$work/first" ] && first=$(python3 -c "print(f'{$(cat "$work/first") - $t0:.2f}')")
  awk -v first="$first" '
    /Maximum resident/ {rss = int($6 / 1024)}
    /User time/ {user = $4} /System time/ {sys = $4}
    /Elapsed/ {n = split($8, p, ":"); wall = (n == 3) ? p[1]*3600 + p[2]*60 + p[3] : p[1]*60 + p[2]}
    END {printf "%d %.2f %.2f %s\n", rss, wall, user + sys, first}' "$work/time" >>"$work/results"
}

for c in "${cases[@]}"; do
  : >"$work/results"
  for r in $(seq "$runs"); do
    case $c in
      links1 | links3)
        start_server links "${c#links}"
        sed 's|.*|http://127.0.0.1:&/|' "$work/ports" >"$work/seeds"
        crawl 50 ;;
      seeds100k)
        start_server tiny 4; seeds_over_sites 100000; crawl 50 ;;
      sitemap)
        start_server sitemap 1; sed 's|.*|http://127.0.0.1:&/|' "$work/ports" >"$work/seeds"
        crawl 50 ;;
      load100k | load200k)
        n=${c#load}; start_server tiny 4; seeds_over_sites "${n%k}000"; crawl 1 ;;
      distinct100k | distinct200k)
        n=${c#distinct}; start_server tiny 1; seeds_distinct "${n%k}000"; crawl 1 "" 30 ;;
      wait)
        start_server tiny 1
        printf 'http://127.0.0.1:%s/\n' "$(dead_port)" >"$work/seeds"
        for i in $(seq 200); do printf 'http://127.0.0.1:%s/w%s\n' "$(cat "$work/ports")" "$i"; done >>"$work/seeds"
        printf '[robots]\nerror_retry = "20s"\nunreachable_retries = 3\n' >"$work/wait.toml"
        crawl 0 "$work/wait.toml" ;;
      *) echo "unknown case $c" >&2; exit 2 ;;
    esac
    stop_server
    read -r rss wall cpu first < <(tail -1 "$work/results")
    printf '%-13s run %d: %5d MB peak RSS, %7.2f s wall, %7.2f s CPU (user+sys), first request %s s\n' \
      "$c" "$r" "$rss" "$wall" "$cpu" "$first"
  done
  sort -n -k1 "$work/results" | awk -v c="$c" '{r[NR]=$1} END {m=r[int((NR+1)/2)]; printf "%-13s median peak RSS %d MB", c, m}'
  for k in 2 3 4; do
    sort -g -k$k "$work/results" | awk -v k=$k '{v[NR]=$k} END {printf ", median %s %s", (k==2?"wall":k==3?"CPU":"first"), v[int((NR+1)/2)]}'
  done
  echo
done
