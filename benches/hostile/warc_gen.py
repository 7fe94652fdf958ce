#!/usr/bin/env python3
"""Write the issue-10 WARC: RECORDS response records of ~16 MB HTML each (gzip'd per record, so
the file is small), spread over HOSTS hosts. Usage: warc_gen.py OUT.warc.gz [RECORDS] [HOSTS]"""
import gzip, sys

out = sys.argv[1]
records = int(sys.argv[2]) if len(sys.argv) > 2 else 100
hosts = int(sys.argv[3]) if len(sys.argv) > 3 else 1
body_len = 16_000_000
with open(out, "wb") as f:
    for i in range(records):
        host = f"h{i % hosts}.example"
        para = f"<p>Story {i}: the council and the engineers agreed on the harbour budget.</p>\n"
        head = f"<!doctype html><html><head><title>Page {i}</title></head><body><nav>Home</nav>"
        html = head + para * ((body_len - len(head) - 20) // len(para)) + "</body></html>"
        html = html.encode()
        block = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                 + f"Content-Length: {len(html)}\r\n\r\n".encode() + html)
        rec = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://{host}/p{i}\r\n"
               f"Content-Length: {len(block)}\r\n\r\n").encode() + block + b"\r\n\r\n"
        f.write(gzip.compress(rec, 6))
