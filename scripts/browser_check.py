#!/usr/bin/env python3
"""Open the built documentation site in headless Chromium and check it.

    python3 scripts/dev.py docs                 # builds docs/_build/html
    python3 scripts/browser_check.py [--screenshots docs/_static]

Serves docs/_build/html on a local port, loads the home page, one API page,
one gallery page and a search, and fails if a page logs a console error or
warning, if a page misses what it must show (the API page its
autosummary table, the gallery page its figure, the search its results), or
if a page or one of its images does not load. With ``--screenshots DIR``
it saves a screenshot of each page there. Needs ``chromium`` on PATH
(Debian's package).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "docs" / "_build" / "html"

# page, what its rendered DOM must contain, screenshot name
PAGES = [
    ("index.html", r'href="getting-started.html"', "home"),
    ("api/outprob.html", r'class="autosummary', "api"),
    ("gallery/plot_conformal_fdr.html", r'<img[^>]+sphx_glr_plot_conformal_fdr_001', "gallery"),
    ("search.html?q=median_nmad", r"Search finished, found [1-9]\d* page", "search"),
]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    failed: list[str] = []

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        # the browser asks for /favicon.ico by itself; the pages name none
        if len(args) >= 2 and str(args[1]).startswith(("4", "5")) and "/favicon.ico" not in str(args[0]):
            self.failed.append(f"{args[1]} {args[0]}")


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("chromium not found (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000",
             "--window-size=1280,900", *args],
            capture_output=True, text=True, timeout=180, check=False)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--screenshots", type=Path, help="save a screenshot of each page here")
    args = ap.parse_args()
    if not (SITE / "index.html").is_file():
        raise SystemExit(f"{SITE} is not built: python3 scripts/dev.py docs")
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems = []
    try:
        for page, must, name in PAGES:
            run = chromium("--dump-dom", base + page)
            console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
            bad = [line for line in console if re.search(r"(ERROR|WARNING):CONSOLE", line)]
            ok = run.returncode == 0 and re.search(must, run.stdout) is not None
            print(f"{page:<40} {'ok' if ok and not bad else 'FAILED'}; "
                  f"{len(console)} console messages, {len(bad)} errors or warnings")
            problems += [f"{page}: {line}" for line in bad]
            if not ok:
                problems.append(f"{page}: exit {run.returncode}, no match for {must!r}")
            if args.screenshots:
                args.screenshots.mkdir(parents=True, exist_ok=True)
                shot = args.screenshots.resolve() / f"screenshot-{name}.png"
                chromium(f"--screenshot={shot}", base + page)
                print(f"{'':<40} screenshot {shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot}")
    finally:
        server.shutdown()
    problems += [f"not served: {f}" for f in QuietHandler.failed]
    for p in problems:
        print("!", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
