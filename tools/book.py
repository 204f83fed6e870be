#!/usr/bin/env python3
"Execute every notebook in nbs/ and write the book to _site/: index.html plus one HTML page per chapter, each with a sidebar."
import re, sys, warnings
from pathlib import Path
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from nbconvert import HTMLExporter

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root))
from conftest import nbdev_skips  # the cells nbdev_test skips (tst_flags, eval: false, nbdev_export) are shown but not run

warnings.filterwarnings("ignore", "Cell is missing an id field")  # harmless here; nbdev_clean adds the ids
CSS = """<style>#tb-nav{position:fixed;top:0;left:0;bottom:0;width:220px;overflow:auto;padding:1em;background:#f5f5f5;
border-right:1px solid #ddd;font:14px/1.6 sans-serif}#tb-nav a{display:block;color:#246;text-decoration:none}
#tb-nav a.cur{font-weight:bold}body{margin-left:250px!important}</style>"""

def title(nb, stem:str) -> str:
    "The first markdown heading of `nb`, numbered like its file (`00 Tensor`)."
    h = next((m[1] for c in nb.cells if c.cell_type == "markdown" and (m := re.search(r"^#+\s+(.+)$", c.source, re.M))), stem)
    return f"{stem[:2]} {h}" if stem[:2].isdigit() else h

def tidy(nb):
    "After running `nb`: drop `#| hide` and `#| default_exp` cells, strip `#|` directives and the title cell's frontmatter list."
    nb.cells = [c for c in nb.cells if not re.match(r"#\|\s*(hide|default_exp)\b", c.source.lstrip())]
    for c in nb.cells:
        if c.cell_type == "code": c.source = re.sub(r"^#\|.*\n?", "", c.source, flags=re.M)
    first_md = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if first_md: first_md.source = re.sub(r"^- \w+: .*\n?", "", first_md.source, flags=re.M)

def page(nb, name:str, pages:dict) -> str:
    "HTML for notebook `nb` (page `name`) with a sidebar linking every page in `pages` (name -> title)."
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb, resources={"metadata": {"name": pages[name]}})
    links = "".join(f'<a href="{n}.html"{" class=cur" if n == name else ""}>{t}</a>' for n, t in pages.items())
    html = html.replace("</head>", CSS + "</head>", 1)
    html = re.sub(r"<body[^>]*>", lambda m: f'{m[0]}<nav id="tb-nav">{links}</nav>', html, count=1)
    return re.sub(r'href="(?!https?:)([\w./-]+)\.ipynb', r'href="\1.html', html)

if __name__ == "__main__":
    paths = sorted((root / "nbs").glob("*.ipynb"), key=lambda p: (p.stem != "index", p.stem))
    nbs = {p.stem: nbformat.read(p, as_version=4) for p in paths}
    pages = {stem: title(nb, stem) for stem, nb in nbs.items()}
    (site := root / "_site").mkdir(exist_ok=True)
    failed = []
    for stem, nb in nbs.items():
        for c in nb.cells:
            if c.cell_type == "code" and nbdev_skips(c.source): c.metadata.setdefault("tags", []).append("skip-execution")
        print(f"executing {stem}.ipynb", flush=True)
        try: NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(root / "nbs")}}).execute()
        except CellExecutionError as e: failed.append(stem); print(f"{stem}.ipynb failed (its page shows the error):\n{e}", file=sys.stderr)
        tidy(nb)
        (site / f"{stem}.html").write_text(page(nb, stem, pages), encoding="utf-8")
    print(f"wrote {len(nbs)} pages to {site}/" + (f"; failed: {', '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)
