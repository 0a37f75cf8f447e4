"""Run by test_redirect_names.py inside a private network and mount namespace (`unshare -n -m`, as
root) whose /etc/hosts is the test's: names that resolve to an intranet address (allowed as a
source by CUDAGLOSS_LOCAL_SOURCES), to loopback (allowed too) and to the metadata address, and
one that resolves to PUBLIC, a public address on the namespace's own loopback. `cudagloss links`
is run as an author runs it, on a glossary citing public pages that redirect to those names, and
local pages that redirect to one another. Prints one JSON object: the report's results, the
sources as stamped, the paths each internal service was asked for, and the command's stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent.parent / "src"
sys.path[:0] = [str(SRC), str(HERE.parent)]

import yaml  # noqa: E402

from cudagloss.model.addresses import LOCAL_ENV  # noqa: E402
from localserver import Quiet  # noqa: E402
from scaffold import good_glossary  # noqa: E402

PUBLIC, INTRANET, LOOP, METADATA = "93.184.215.14", "10.9.8.7", "127.0.0.1", "169.254.169.254"
HOSTS = f"""127.0.0.1 localhost
{LOOP} loop.example
{INTRANET} intranet.example
{METADATA} metadata.example
{PUBLIC} public.example
"""
"""The namespace's /etc/hosts (test_redirect_names.py mounts it there)."""
PORTS: dict[str, int] = {}
HITS: dict[str, list[str]] = {INTRANET: [], LOOP: [], METADATA: []}
ROUTES = {
    "/to-intranet": "http://intranet.example:{intranet}/from-public",
    "/to-loop": "http://loop.example:{loop}/from-public",
    "/to-metadata": "http://metadata.example:{metadata}/from-public",
    "/to-public-name": "http://public.example:{public}/page",
    "/to-intranet-twice": "http://public.example:{public}/to-intranet",
    "/wayback/available": "http://intranet.example:{intranet}/from-public-archive",
    "/to-name": "http://intranet.example:{intranet}/own-via-name",
    "/to-literal": f"http://{INTRANET}:{{intranet}}/own-via-literal",
}
"""Where each path redirects, on any server (a port of each filled in)."""


class Site(Quiet):
    """Every server: a redirect where ROUTES has one, else a small page; what the internal ones are asked, kept."""

    def do_GET(self) -> None:
        address = str(self.server.server_address[0])  # type: ignore[index]
        if address in HITS:
            HITS[address].append(self.path.split("?")[0])
        if self.path.split("?")[0] in ROUTES:
            self.send_response(302)
            self.send_header("Location", ROUTES[self.path.split("?")[0]].format(**PORTS))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"<html><head><title>A page</title></head><body><p>Hello.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(name: str, address: str) -> None:
    httpd = ThreadingHTTPServer((address, 0), Site)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    PORTS[name] = int(httpd.server_address[1])


def main() -> None:
    for name, address in (("public", PUBLIC), ("intranet", INTRANET), ("loop", LOOP), ("metadata", METADATA)):
        serve(name, address)
    public, intranet = f"http://{PUBLIC}:{PORTS['public']}", f"http://intranet.example:{PORTS['intranet']}"
    cited = {
        "public page": f"{public}/page",
        "public to a public name": f"{public}/to-public-name",
        "public to intranet name": f"{public}/to-intranet",
        "public to loopback name": f"{public}/to-loop",
        "public to metadata name": f"{public}/to-metadata",
        "public, public name, intranet name": f"{public}/to-intranet-twice",
        "public name to intranet name": f"http://public.example:{PORTS['public']}/to-intranet",
        "intranet by name": f"{intranet}/own",
        "intranet by name to intranet literal": f"{intranet}/to-literal",
        "intranet literal to intranet name": f"http://{INTRANET}:{PORTS['intranet']}/to-name",
    }
    sources = "sources:\n" + "".join(f"  - title: {label}\n    url: {url}\n" for label, url in cited.items())
    root = good_glossary(Path(tempfile.mkdtemp()), sources)
    env = dict(os.environ, PYTHONPATH=str(SRC), **{LOCAL_ENV: f"{INTRANET}/32,{LOOP}/32"})
    api = f"{public}/wayback/available"
    run = subprocess.run(
        [sys.executable, "-m", "cudagloss", "links", "terms", "--archive-api", api, "--report", "links.json"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    label = {url: name for name, url in cited.items()}
    report = json.loads((root / "links.json").read_text()) if (root / "links.json").exists() else {"results": []}
    stamped = yaml.safe_load((root / "terms" / "warp.yaml").read_text())["sources"]
    print(
        json.dumps(
            {
                "results": {label[r["url"]]: [r["result"], r["detail"]] for r in report["results"]},
                "checked_on": {label[s["url"]]: "checked_on" in s for s in stamped},
                "archived": {label[s["url"]]: "archived_url" in s for s in stamped},
                "hits": HITS,
                "stderr": run.stderr,
            }
        )
    )


if __name__ == "__main__":
    main()
