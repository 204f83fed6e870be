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

SECTIONS = """const hs = [...document.querySelectorAll('article :is(h1, h2, h3, h4, h5, h6)[id]')];
return Object.fromEntries(hs.map((h, i) => { const r = document.createRange(); r.setStartBefore(h);
  hs[i + 1] ? r.setEndBefore(hs[i + 1]) : r.setEndAfter(document.querySelector('article').lastChild); return [h.id, r.toString()]; }))"""

CODE = """const pre = [...document.querySelectorAll('article pre')], first = p => p.textContent.split('\\n')[0];
return [pre.filter(p => p.scrollWidth > p.clientWidth + 1).map(p => first(p).slice(0, 100)),
        [...document.querySelectorAll('article .highlight-ipynb pre')].map(first)]"""

@pytest.fixture(scope="module")
def visits(site, base, browser) -> dict:
    ("Every page opened once: {name: (console errors, [(image src, loaded)], [link hrefs], its footer's 'next' href or None, "
     "{heading id: its section's text, up to the next heading}, ([first lines of code blocks that scroll sideways], "
     "[first lines of code cells]))}.")
    out = {}
    for name in sorted(p.name for p in site.glob("*.html") if p.name != "404.html"):
        browser.get(base + name)
        if name == "index.html": browser.save_screenshot(str(site / "index.png"))
        out[name] = ([e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"],
                     browser.execute_script("return [...document.images].map(i => [i.src, i.complete && i.naturalWidth > 0])"),
                     browser.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)"),
                     browser.execute_script("const a = document.querySelector('a.md-footer__link--next'); return a ? a.href : null"),
                     browser.execute_script(SECTIONS), browser.execute_script(CODE))
    return out

def test_pages(site, base, visits):
    "Every page: it loads, logs no error, its images have loaded, and each link into the site names a page that exists (and its anchor)."
    bad, ids = [], functools.cache(lambda path: set(re.findall(r'id="([^"]*)"', (site / path).read_text(encoding="utf-8"))))
    for name, (errors, imgs, links, *_) in visits.items():
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

def test_code_fits(visits):
    ("At a 1280-pixel window no code block scrolls sideways (in cells, outputs or the text), and each page marks every cell its "
     "notebook exports: the code's first line names the module (`tools/book.py`'s `EXPORTED`).")
    import json
    from tools.book import EXPORTED
    bad = [f"{name}: scrolls sideways: {line}" for name, v in visits.items() for line in v[5][0]]
    for name, v in visits.items():
        if not (nb := SITE.parent / "nbs" / name.replace(".html", ".ipynb")).exists(): continue
        srcs = ["".join(c["source"]) for c in json.loads(nb.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        want = sum(bool(re.search(r"^#\|\s*export", s, re.M)) and not re.match(r"#\|\s*hide\b", s.lstrip()) for s in srcs)
        if (got := sum(line.startswith(EXPORTED) for line in v[5][1])) != want:
            bad.append(f"{name}: {got} cells marked exported, {want} are")
    assert not bad, "\n".join(bad)

def test_search(base, browser):
    "The search box finds a word of chapter 00 (the index is built offline; the search runs in the page)."
    from selenium.webdriver.support.ui import WebDriverWait
    browser.get(base + "index.html")
    (box := browser.find_element("css selector", "input.md-search__input")).click(); box.send_keys("ShapeTracker")
    hits = WebDriverWait(browser, 20).until(lambda d: d.find_elements("css selector", ".md-search-result__item a"))
    assert any("00_tensor.html" in h.get_attribute("href") for h in hits), [h.get_attribute("href") for h in hits]

def nbdev_modules() -> dict:
    "{module name: its file} for each module nbdev wrote to tinybook/ (its first lines say so)."
    pkg = SITE.parent / "tinybook"
    return {".".join(p.relative_to(pkg.parent).with_suffix("").parts).removesuffix(".__init__"): p for p in sorted(pkg.rglob("*.py"))
            if "# AUTOGENERATED! DO NOT EDIT!" in p.read_text(encoding="utf-8")}

def test_api_index(base, browser, visits):
    ("The API index lists every module's `__all__` (and methods later modules patch onto classes) under that module, and each link "
     "leads to a chapter page where a heading has the link's id and its section names the entry (operators aside: loops make them).")
    import importlib
    browser.get(base + "api.html")
    tables = browser.execute_script("""const out = [];  // [module, [[name, href]]] for each h2 and the links of the table below it
        for (const e of document.querySelectorAll('article h2, article table a[href]'))
          e.tagName == 'H2' ? out.push([e.textContent.replace('¶', '').trim(), []]) : out.at(-1)[1].push([e.textContent, e.href]);
        return out;""")
    listed, mods = {m: {name for name, _ in links} for m, links in tables}, nbdev_modules()
    assert set(listed) == set(mods), set(listed) ^ set(mods)
    for m in mods: assert set(importlib.import_module(m).__all__) <= listed[m], (m, set(importlib.import_module(m).__all__) - listed[m])
    assert "Tensor.float" in listed["tinybook.ops"] and "Tensor.__add__" in listed["tinybook.elementwise"] and "Tensor.sum" in listed["tinybook.reduce"]
    assert "Tensor.backward" in listed["tinybook.autograd"]
    bad, links = [], [(name, urlparse(href)) for _, links in tables for name, href in links]
    for name, u in links:
        page, short = u.path.rsplit("/", 1)[-1], name.rpartition(".")[2]
        if page not in visits or (text := visits[page][4].get(u.fragment)) is None: bad.append(f"{name}: no heading {page}#{u.fragment}")
        elif not short.startswith("__") and not re.search(rf"(?<!\w){re.escape(short)}(?!\w)", text):
            bad.append(f"{name}: its section {page}#{u.fragment} does not name it")
    assert not bad and len(links) > 500, f"{len(bad)} of {len(links)} links:\n" + "\n".join(bad[:50])

def test_house(base, browser, visits):
    ("The index shows the house when it ran (a site rendered with --no-execute has no outputs): a row for each module nbdev wrote, "
     "chapter 00's at the bottom, each importing only modules in rows below it.")
    browser.get(base + "index.html")
    if not browser.find_elements("css selector", "article .jp-OutputArea-output"): pytest.skip("the index was rendered without running")
    rows = browser.execute_script("""const t = [...document.querySelectorAll('article table')].find(t =>
        [...t.querySelectorAll('th')].map(h => h.textContent).join() == 'chapter,module,owns,imports');
      return t ? [...t.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim())) : [];""")
    for prev, row in zip(rows, rows[1:]): row[0] = row[0] or prev[0]  # a chapter's first row names it
    mods = ["tinybook." + m for _, m, *_ in rows]
    assert sorted(mods) == sorted(nbdev_modules()) and rows[-1][0].startswith("00_"), rows
    for i, (_, m, owns, imports) in enumerate(rows):
        assert owns and all("tinybook." + d in mods[i + 1:] for d in imports.split(", ") if d), (m, imports)
