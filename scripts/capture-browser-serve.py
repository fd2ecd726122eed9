#!/usr/bin/env python3
"""Serve one HTML file as /page.html with the header `Document-Policy: js-profiling`.

Used by capture-browser.sh. The JS Self-Profiling API (`new Profiler(...)`) is only
available to documents served with that header, and `python3 -m http.server` cannot
add headers, hence this helper.

Usage: capture-browser-serve.py PAGE.html [PORT]

Binds 127.0.0.1 (PORT 0 or omitted: any free port), prints the chosen port on one line
on stdout, then serves until killed. Any path other than /page.html (the query string
is ignored) gets a 404.
"""

import http.server
import sys
import urllib.parse


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: capture-browser-serve.py PAGE.html [PORT]")
    with open(sys.argv[1], "rb") as f:
        body = f.read()
    port = int(sys.argv[2]) if len(sys.argv) == 3 else 0

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if urllib.parse.urlsplit(self.path).path != "/page.html":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Document-Policy", "js-profiling")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args) -> None:
            sys.stderr.write("serve: " + (fmt % args) + "\n")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
