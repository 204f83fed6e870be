"""The notebooks and the book: every notebook run once by tools/book.py (started by conftest.py when this session began, so they ran
while the other tests did; `--book built` tests the `_site/` that `make book` left instead), then `_site/` served on a loopback port
and every page opened once in headless Chromium: no console errors, every internal link resolves, every image loads, the 'next' links
lead from the index through every chapter, search works; a screenshot of the index is saved."""
import re, shutil, threading, functools, http.server
from pathlib import Path
from urllib.parse import urljoin, urlparse
import pytest

SITE = Path(__file__).resolve().parent.parent / "_site"

def test_notebooks(book_run):
    "Every notebook nbdev_test would run ran without an error (the message names the notebook, the cell and the error)."
    if book_run is None: pytest.skip("--book built: the notebooks were not run in this session")
    rc, log = book_run
    assert rc == 0, log[log.find("FAILED nbs/"):][-20000:] if "FAILED nbs/" in log else log[-20000:]

@pytest.fixture(scope="module")
def site(book_run) -> Path:
    if not (SITE / "index.html").exists(): pytest.skip("no _site/: run `make book` (or `python tools/book.py --no-execute`) first")
    return SITE

@pytest.fixture(scope="module")
def base(site):
    "The site on a loopback port: its base URL."
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass

@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is a dev dependency")
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian's chromium and chromium-driver (`make test` installs them when run as root)")
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"): opts.add_argument(a)
    opts.binary_location = shutil.which("chromium")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=opts, service=webdriver.ChromeService(shutil.which("chromedriver")))
    yield d
    d.quit()

@pytest.fixture(scope="module")
def visits(site, base, browser) -> dict:
    "Every page opened once: {name: (console errors, [(image src, loaded)], [link hrefs], its footer's 'next' href or None)}."
    out = {}
    for name in sorted(p.name for p in site.glob("*.html") if p.name != "404.html"):
        browser.get(base + name)
        if name == "index.html": browser.save_screenshot(str(site / "index.png"))
        out[name] = ([e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"],
                     browser.execute_script("return [...document.images].map(i => [i.src, i.complete && i.naturalWidth > 0])"),
                     browser.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)"),
                     browser.execute_script("const a = document.querySelector('a.md-footer__link--next'); return a ? a.href : null"))
    return out

def test_pages(site, base, visits):
    "Every page: it loads, logs no error, its images have loaded, and each link into the site names a page that exists (and its anchor)."
    bad, ids = [], functools.cache(lambda path: set(re.findall(r'id="([^"]*)"', (site / path).read_text(encoding="utf-8"))))
    for name, (errors, imgs, links, _) in visits.items():
        bad += [f"{name}: console: {e}" for e in errors]
        bad += [f"{name}: image did not load: {src}" for src, ok in imgs if not ok]
        for href in links:
            u = urlparse(urljoin(base + name, href))
            if u.netloc != urlparse(base).netloc: continue
            path = u.path.lstrip("/") or "index.html"
            if not (site / path).exists(): bad.append(f"{name}: link to a missing page: {href}")
            elif u.fragment and path.endswith(".html") and u.fragment not in ids(path):
                bad.append(f"{name}: link to a missing anchor: {href}")
    assert not bad, "\n".join(bad)
    assert {"index.html", "00_tensor.html", "10_onnx.html"} <= set(visits)

def test_reader_path(site, visits):
    "A reader follows 'next' from the index to the last chapter, through pages that exist; the index's screenshot is saved for review."
    visited = ["index.html"]
    while nxt := visits[visited[-1]][3]:
        visited.append(urlparse(nxt).path.rsplit("/", 1)[-1])
        assert visited[-1] in visits and len(visited) < 100, visited
    assert "10_onnx.html" in visited, visited
    assert (site / "index.png").stat().st_size > 10_000

def test_search(base, browser):
    "The search box finds a word of chapter 00 (the index is built offline; the search runs in the page)."
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(base + "index.html")
    (box := browser.find_element("css selector", "input.md-search__input")).click(); box.send_keys("ShapeTracker")
    hits = WebDriverWait(browser, 20).until(lambda d: d.find_elements("css selector", ".md-search-result__item a"))
    assert any("00_tensor.html" in h.get_attribute("href") for h in hits), [h.get_attribute("href") for h in hits]
