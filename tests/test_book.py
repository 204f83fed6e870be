"""The book in a real browser: `_site/` (built by `make book`, or by the test command before this test) served on a loopback port and every
page opened in headless Chromium: no console errors, every internal link resolves, every image loads; a screenshot of the index is saved."""
import shutil, threading, functools, http.server
from pathlib import Path
from urllib.parse import urljoin, urlparse
import pytest

SITE = Path(__file__).resolve().parent.parent / "_site"
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is a dev dependency")
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
if not (SITE / "index.html").exists():
    pytest.skip("no _site/: run `make book` (or `python tools/book.py --no-execute`) first", allow_module_level=True)
if not (shutil.which("chromium") and shutil.which("chromedriver")):
    pytest.skip("needs Debian's chromium and chromium-driver (`make test` installs them when run as root)", allow_module_level=True)

@pytest.fixture(scope="module")
def base():
    "The site on a loopback port: its base URL."
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(SITE)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass

@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"): opts.add_argument(a)
    opts.binary_location = shutil.which("chromium")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    d = webdriver.Chrome(options=opts, service=webdriver.ChromeService(shutil.which("chromedriver")))
    yield d
    d.quit()

def pages() -> list[str]: return sorted(p.name for p in SITE.glob("*.html") if p.name != "404.html")

def test_pages(base, browser):
    "Every page: it loads, logs no error, its images have loaded, and each link into the site names a page that exists (and its anchor)."
    seen, bad = set(pages()), []
    for name in pages():
        browser.get(base + name)
        bad += [f"{name}: console: {e['message']}" for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        imgs = browser.execute_script("return [...document.images].map(i => [i.src, i.complete && i.naturalWidth > 0])")
        bad += [f"{name}: image did not load: {src}" for src, ok in imgs if not ok]
        for href in browser.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)"):
            u = urlparse(urljoin(base + name, href))
            if u.netloc != urlparse(base).netloc: continue
            path = u.path.lstrip("/") or "index.html"
            if not (SITE / path).exists(): bad.append(f"{name}: link to a missing page: {href}")
            elif u.fragment and path.endswith(".html") and f'id="{u.fragment}"' not in (SITE / path).read_text(encoding="utf-8"):
                bad.append(f"{name}: link to a missing anchor: {href}")
    assert not bad, "\n".join(bad)
    assert {"index.html", "00_tensor.html", "10_onnx.html"} <= seen

def test_reader_path(base, browser):
    "A reader clicks 'next' from the index to the last chapter; the index's screenshot is saved for review."
    browser.get(base + "index.html"); browser.save_screenshot(str(SITE / "index.png"))
    visited = [browser.current_url.rsplit("/", 1)[-1]]
    while nxt := browser.find_elements("css selector", "a.md-footer__link--next"):
        browser.get(nxt[0].get_attribute("href")); visited.append(browser.current_url.rsplit("/", 1)[-1])
        assert len(visited) < 100, visited
    assert visited[0] == "index.html" and "10_onnx.html" in visited, visited
    assert (SITE / "index.png").stat().st_size > 10_000

def test_search(base, browser):
    "The search box finds a word of chapter 00 (the index is built offline; the search runs in the page)."
    browser.get(base + "index.html")
    (box := browser.find_element("css selector", "input.md-search__input")).click(); box.send_keys("ShapeTracker")
    hits = WebDriverWait(browser, 20).until(lambda d: d.find_elements("css selector", ".md-search-result__item a"))
    assert any("00_tensor.html" in h.get_attribute("href") for h in hits), [h.get_attribute("href") for h in hits]
