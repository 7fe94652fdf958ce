#!/usr/bin/env bash
# Check `thresher inspect`'s HTML report in a real browser: crawl a tiny templated site
# served by `python3 -m http.server` on 127.0.0.1, run `thresher inspect` on it, load the report
# in headless Chromium (Debian's `chromium` package) and assert from the DOM Chromium built that
# the marks (template, dropped, kept) are there and that text planted in a crawled page stayed text (no script ran).
#
# Needs: cargo, python3, chromium (apt-get install -y chromium). No network beyond 127.0.0.1.
# Env: THRESHER=path to a built binary (default: build target/debug/thresher);
#      INSPECT_KEEP=DIR keeps the report, dumped DOM and a screenshot (report.png) in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "inspect-chromium: FAIL: $*" >&2
  exit 1
}

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
[ -n "$CHROMIUM" ] || fail "chromium not found (apt-get install -y chromium)"
command -v python3 >/dev/null || fail "python3 not found"

if [ -z "${THRESHER:-}" ]; then
  cargo build --locked --quiet --bin thresher
  THRESHER=$PWD/target/debug/thresher
fi
[ -x "$THRESHER" ] || fail "no thresher binary at $THRESHER"

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- a tiny site: one template, twelve articles, one with markup-looking text --------------
SITE=$WORK/site
python3 - "$SITE" <<'PY'
import html, os, sys
root = sys.argv[1]
os.makedirs(root, exist_ok=True)
words = ("river council budget harbour engineers storm market school railway farmers museum "
         "bridge doctors festival library energy").split()
def sentence(p, n):
    w = lambda k: words[(p * 7 + n * 3 + k * 5) % len(words)]
    return (f"The {w(0)} and the {w(1)} met on day {p} to discuss item {n}, while the {w(2)} "
            f"said the {w(3)} plan would change the {w(4)} for everyone in {w(5)}ville.")
# Text that would run if the report pasted it unescaped.
planted = ("Planted text: </textarea></div><script>document.body.setAttribute('data-pwned','1')"
           "</script><img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"> and "
           "the council said the harbour road reopens next week, as the engineers agreed.")
def related(i):
    return "".join(f'<li><a href="/a{k}.html">Council answers questions on the {words[k]} '
                   f'story {k}</a></li>' for k in ((i + d) % 12 + 1 for d in range(1, 4)))
def page(i, body):
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Story {i}</title>
<script>var analytics = 1;</script></head><body>
<nav><a href="/">Home</a> <a href="/a1.html">World</a> <a href="/a2.html">Science</a></nav>
<div class="page"><div class="main"><h1>Headline {i} about the {words[i % len(words)]}</h1>
<p class="meta">By Ann Reporter, June {i}</p>
<div class="text">{body}</div>
<div class="share"><a href="#">Share</a> <a href="#">Email</a></div>
<div class="related"><h3>Related stories</h3><ul>{related(i)}</ul></div></div>
<div class="side"><h3>Most read</h3><ol><li><a href="/a3.html">Storm closes the harbour road</a></li>
<li><a href="/a4.html">Museum opens a new wing</a></li></ol></div></div>
<footer><p>Copyright 2024 Example News. All rights reserved.</p><a href="/">About us</a></footer>
</body></html>"""
links = "".join(f'<li><a href="/a{i}.html">Story {i}</a></li>' for i in range(1, 13))
with open(os.path.join(root, "index.html"), "w") as f:
    f.write(page(0, f"<ul>{links}</ul>"))
for i in range(1, 13):
    paras = [" ".join(sentence(i, p * 3 + s) for s in range(3)) for p in range(3)]
    if i == 5:
        paras[1] = planted
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paras)
    with open(os.path.join(root, f"a{i}.html"), "w") as f:
        f.write(page(i, body))
PY

python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$SITE" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
PORT=
for _ in $(seq 1 50); do
  PORT=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$WORK/server.log" | head -1)
  [ -n "$PORT" ] && break
  sleep 0.1
done
[ -n "$PORT" ] || fail "python3 http.server did not start: $(cat "$WORK/server.log")"
HOST=127.0.0.1:$PORT
BASE=http://$HOST

# ---- crawl it, then inspect -----------------------------------------------------------------
echo "$BASE/" >"$WORK/seeds.txt"
printf '[crawl]\ndelay = "0ms"\n[template]\nmin_pages = 5\n' >"$WORK/thresher.toml"
"$THRESHER" crawl --quiet --seeds "$WORK/seeds.txt" --config "$WORK/thresher.toml" \
  --data "$WORK/data" --out "$WORK/out" >"$WORK/crawl.log" 2>&1 ||
  fail "thresher crawl failed: $(cat "$WORK/crawl.log")"
REPORT=$WORK/report.html
"$THRESHER" inspect "$HOST" --data "$WORK/data" --page "$BASE/a5.html" --report "$REPORT" \
  >"$WORK/inspect.txt" 2>&1 || fail "thresher inspect failed: $(cat "$WORK/inspect.txt")"
cat "$WORK/inspect.txt"
[ -s "$REPORT" ] || fail "no report written"

# ---- load it in headless Chromium -----------------------------------------------------------
chrome() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d -p "$WORK")" "$@" "file://$REPORT" 2>>"$WORK/chromium.log"
}
chrome --dump-dom >"$WORK/dom.html" || fail "chromium --dump-dom failed: $(tail -5 "$WORK/chromium.log")"
chrome --screenshot="$WORK/report.png" --window-size=1280,2000 >/dev/null ||
  fail "chromium --screenshot failed: $(tail -5 "$WORK/chromium.log")"
[ -s "$WORK/report.png" ] || fail "no screenshot"

python3 - "$REPORT" "$WORK/dom.html" <<'PY' || fail "the report as Chromium loaded it is wrong (see above)"
import sys
from html.parser import HTMLParser

class Scan(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.states, self.tags, self.body_attrs, self.text, self.title = {}, {}, {}, [], ""
        self._in_title = False
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] = self.tags.get(tag, 0) + 1
        if "data-state" in a:
            self.states[a["data-state"]] = self.states.get(a["data-state"], 0) + 1
        if tag == "body":
            self.body_attrs = a
        self._in_title = tag == "title"
    def handle_endtag(self, tag):
        self._in_title = False
    def handle_data(self, data):
        self.text.append(data)
        if self._in_title:
            self.title += data

def scan(path):
    s = Scan()
    with open(path, encoding="utf-8") as f:
        s.feed(f.read())
    s.close()
    return s

source, dom = scan(sys.argv[1]), scan(sys.argv[2])
errors = []
for state in ("template", "dropped", "kept"):
    if dom.states.get(state, 0) == 0:
        errors.append(f"no data-state={state} blocks in the loaded report")
if dom.states != source.states:
    errors.append(f"Chromium's DOM has marks {dom.states}, the file {source.states}: markup broke out")
for tag in ("script", "img", "iframe", "object", "textarea"):
    if dom.tags.get(tag):
        errors.append(f"{dom.tags[tag]} <{tag}> element(s) in the loaded report")
if "data-pwned" in dom.body_attrs:
    errors.append("a script planted in a crawled page ran in the report")
if not dom.title.startswith("thresher inspect: "):
    errors.append(f"the report's title changed: {dom.title!r}")
text = "".join(dom.text)
if "</textarea></div><script>document.body.setAttribute('data-pwned','1')</script>" not in text:
    errors.append("the planted markup does not show as text")
for e in errors:
    print("  " + e, file=sys.stderr)
print(f"inspect-chromium: marks in Chromium's DOM: {dom.states}")
sys.exit(1 if errors else 0)
PY

if [ -n "${INSPECT_KEEP:-}" ]; then
  mkdir -p "$INSPECT_KEEP"
  cp "$REPORT" "$WORK/dom.html" "$WORK/report.png" "$WORK/inspect.txt" "$INSPECT_KEEP/"
  echo "inspect-chromium: kept the report, DOM and screenshot in $INSPECT_KEEP"
fi
echo "inspect-chromium: OK"
