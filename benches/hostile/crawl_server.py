#!/usr/bin/env python3
"""Local sites for the issue-10 crawl figures (benches/hostile/crawl_figures.sh), on 127.0.0.1 only.

Usage: crawl_server.py CASE SITES READY_FILE FIRST_FILE
  CASE   links   - `/` is a 4.95 MB page with 230,000 distinct same-site links (`/a<base-36 i>`)
         sitemap - robots.txt has a `Sitemap:` line to a urlset of 50,000 <loc>s
         tiny    - every path is a tiny page
  SITES  how many sites (one port each)
  READY_FILE  gets the ports, one a line, once every site listens
  FIRST_FILE  gets the time.time() of the first request any site received

Every other path answers a tiny HTML page that names its path (so no two pages are duplicates)
and has no links; robots.txt is a 404 except in the sitemap case. Runs until killed."""
import http.server, sys, threading, time

case, sites, ready_file, first_file = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
LINKS, BIG = 230_000, 4_950_000
first_lock = threading.Lock()
first_seen = False


def b36(n):
    digits = ""
    while True:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if n == 0:
            return digits


def big_page(site):
    head = f"<!doctype html><html><head><title>Big {site}</title></head><body><h1>Index</h1>\n"
    letter = "abcdefghijklmnopqrstuvwxyz"[site % 26]
    links = "".join(f"<a href={letter}{b36(i)}>{letter}</a>\n" for i in range(LINKS))
    tail = "</body></html>\n"
    pad = BIG - len(head) - len(links) - len(tail)
    assert pad >= 0, "links alone exceed the page size"
    return (head + links + "<p>" + "x" * max(pad - 7, 0) + "</p>\n" + tail).encode()


def sitemap(port):
    locs = "".join(f"<url><loc>http://127.0.0.1:{port}/s{i}</loc></url>\n" for i in range(50_000))
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + locs + "</urlset>\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global first_seen
        with first_lock:
            if not first_seen:
                first_seen = True
                with open(first_file, "w") as f:
                    f.write(f"{time.time():.3f}\n")
        site = self.server.site
        path = self.path
        if path == "/robots.txt":
            if case == "sitemap":
                body = f"User-agent: *\nAllow: /\nSitemap: http://127.0.0.1:{self.server.server_port}/sitemap.xml\n"
                return self.send(200, "text/plain", body.encode())
            return self.send(404, "text/plain", b"not found\n")
        if case == "links" and path == "/":
            return self.send(200, "text/html; charset=utf-8", self.server.big)
        if case == "sitemap" and path == "/sitemap.xml":
            return self.send(200, "application/xml", self.server.sitemap)
        body = (f"<!doctype html><html><head><title>{path}</title></head><body>"
                f"<p>Site {site}, page {path}.</p></body></html>\n")
        self.send(200, "text/html; charset=utf-8", body.encode())


servers = []
for site in range(sites):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.site = site
    srv.big = big_page(site) if case == "links" else b""
    srv.sitemap = sitemap(srv.server_port) if case == "sitemap" else b""
    servers.append(srv)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
with open(ready_file + ".tmp", "w") as f:
    f.write("".join(f"{s.server_port}\n" for s in servers))
import os
os.rename(ready_file + ".tmp", ready_file)
while True:
    time.sleep(3600)
