#!/usr/bin/env python3
r"""Open the built documentation site in headless Chromium and check it.

    python3 scripts/dev.py docs                 # builds docs/_build/html
    python3 scripts/browser_check.py [--screenshots docs/_static]

Serves docs/_build/html on a local port and loads, with every other host
unreachable (an air-gapped reader), the home page, the API reference's
landing page and one module page, the conformal user guide and
``outprob.select`` (their formulas), one gallery page and a search. It
fails if a page names a script, stylesheet or image on another host, if
it logs a console error or warning, if a page
misses what it must show (the API pages their summary tables, the gallery
page its figure, the search its results), or if a page or one of its
images does not load; and, on every page, if a formula was not typeset:
each ``math`` element of the built page must hold MathJax's output, no raw
TeX (``\[``, ``\(``, ``\frac``, ``$$``) may be left in its text outside code,
and MathJax's fonts must have come from the site. With ``--screenshots DIR``
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
    ("api/index.html", r'id="conformal-p-values-and-selection".*class="[^"]*autosummary', "api-index"),
    ("api/outprob.html", r'class="autosummary', "api"),
    ("user-guide/conformal.html", r'<mjx-container[^>]+display="true"', "formulas"),
    ("api/generated/outprob.select.html", r'<mjx-container', None),
    ("gallery/plot_conformal_fdr.html", r'<img[^>]+sphx_glr_plot_conformal_fdr_001', "gallery"),
    ("search.html?q=median_nmad", r"Search finished, found [1-9]\d* page", "search"),
]

# Every host but the local server is unreachable: no name resolves, and
# whatever is not loopback goes to a proxy that does not exist.
OFFLINE = ["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
           "--proxy-server=127.0.0.1:9"]
# TeX that MathJax would have replaced; code may show it.
RAW_TEX = re.compile(r"\\\[|\\\(|\\frac|\$\$")
CODE = re.compile(r"<(pre|code|script|style|mjx-assistive-mml)\b.*?</\1>", re.S)
MATH = re.compile(r'class="math notranslate nohighlight"')
EXTERNAL = re.compile(r'<(?:script|img|link)\b[^>]*\b(?:src|href)="((?:https?:)?//[^"]+)"')


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    failed: list[str] = []
    served: list[str] = []

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        # the browser asks for /favicon.ico by itself; the pages name none
        if len(args) >= 2 and str(args[1]).startswith(("4", "5")) and "/favicon.ico" not in str(args[0]):
            self.failed.append(f"{args[1]} {args[0]}")
        elif len(args) >= 2:
            self.served.append(str(args[0]))


def math_problems(page: str, dom: str) -> list[str]:
    """What is wrong with the page's formulas in the rendered DOM: a math
    element MathJax did not typeset, raw TeX left in the text, or the
    glyphs' fonts not served by the site."""
    built = (SITE / page.split("?")[0]).read_text(encoding="utf-8")
    expected = len(MATH.findall(built))
    typeset = dom.count("<mjx-container")
    problems = []
    if typeset < expected:
        problems.append(f"{page}: {typeset} of {expected} formulas typeset")
    raw = RAW_TEX.findall(CODE.sub("", dom))
    if raw:
        problems.append(f"{page}: raw TeX in the rendered page: {sorted(set(raw))}")
    fonts = [r for r in QuietHandler.served if "/_static/mathjax/" in r and ".woff" in r]
    if expected and not fonts:
        problems.append(f"{page}: no MathJax font was loaded from the site")
    return problems


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("chromium not found (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
             "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000",
             "--window-size=1280,900", *OFFLINE, *args],
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
            QuietHandler.served.clear()
            run = chromium("--dump-dom", base + page)
            console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
            bad = [line for line in console if re.search(r"(ERROR|WARNING):CONSOLE", line)]
            ok = run.returncode == 0 and re.search(must, run.stdout, re.S) is not None
            math = math_problems(page, run.stdout)
            formulas = run.stdout.count("<mjx-container")
            print(f"{page:<40} {'ok' if ok and not bad and not math else 'FAILED'}; "
                  f"{len(console)} console messages, {len(bad)} errors or warnings, "
                  f"{formulas} formulas typeset")
            problems += [f"{page}: {line}" for line in bad] + math
            problems += [f"{page}: loads {url} from another host"
                         for url in EXTERNAL.findall(run.stdout)]
            if not ok:
                problems.append(f"{page}: exit {run.returncode}, no match for {must!r}")
            if args.screenshots and name:
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
