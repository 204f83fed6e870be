#!/usr/bin/env python3
"""`make book`: execute the notebooks (two at a time) and render them with MkDocs (Material theme, mkdocs-jupyter) as a static
site in _site/: parts and order from nbs/sidebar.yml, previous/next links, a table of contents per page, search, highlighted code,
and nothing fetched from the network. Cells nbdev_test skips (hardware flags, `#| bench`, `#| model`) and NBVAL_SKIP cells are shown
but not run; what they measured reaches the book through the result files in nbs/results/ that the next cells display.
`--no-execute` renders the notebooks as stored (outputs stripped) in seconds; a notebook that fails to run fails the build."""
import os, re, sys, shutil, argparse, subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
import yaml, nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root))
from conftest import nbdev_skips  # noqa: E402  the cells nbdev_test skips

def tidy(nb) -> None:
    "Drop `#| hide` and `#| default_exp` cells, the `#|` directives of the others and the title cell's frontmatter (`- order: 3`); links "
    "to notebooks go to their pages; headings lose their backticks (mkdocs-jupyter's table of contents drops code from the anchors it "
    "links, nbconvert's heading ids keep it)."
    nb.cells = [c for c in nb.cells if not re.match(r"#\|\s*(hide|default_exp)\b", c.source.lstrip())]
    for c in nb.cells:
        if c.cell_type == "code": c.source = re.sub(r"^#\|.*\n?", "", c.source, flags=re.M).strip()
        else:
            c.source = re.sub(r"\]\((?:\.\./)?(?:nbs/)?([\w.-]+)\.ipynb(#[\w-]*)?\)", r"](\1.html\2)", c.source)
            c.source = re.sub(r"^#{1,6} .*$", lambda m: m[0].replace("`", ""), c.source, flags=re.M)
    if md := next((c for c in nb.cells if c.cell_type == "markdown"), None): md.source = re.sub(r"^- \w+: .*\n?", "", md.source, flags=re.M)

def build(path:Path, out:Path, execute:bool) -> str|None:
    "Run notebook `path` (unless not `execute`), tidy it and write it to `out`: None, or the error that stopped it."
    nb, err = nbformat.read(path, as_version=4), None
    for c in nb.cells:
        if c.cell_type == "code" and (nbdev_skips(c.source) or "NBVAL_SKIP" in c.source): c.metadata.setdefault("tags", []).append("skip-execution")
    if execute:
        try: NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
                            extra_arguments=["--IPKernelApp.log_level=ERROR"]).execute()  # not its warning about TCP on loopback
        except CellExecutionError as e: err = str(e)
    tidy(nb)
    nbformat.write(nb, out / path.name)
    return err

def nav(items:list) -> list:
    "sidebar.yml's `contents` as MkDocs' `nav`: a page is its file (titled by its first heading), a part is {name: [pages]}."
    return [{it["section"]: nav(it["contents"])} if isinstance(it, dict) else it for it in items]

def config(pages:list, docs:Path, site:Path) -> dict:
    return {"site_name": "tinybook", "site_description": "A deep-learning stack built in notebooks, the way tinygrad does it",
            "docs_dir": str(docs), "site_dir": str(site), "use_directory_urls": False, "nav": pages, "extra_css": ["book.css"],
            "theme": {"name": "material", "font": False,  # no Google Fonts: the site works offline
                      "features": ["navigation.sections", "navigation.footer", "navigation.top", "toc.follow", "search.highlight",
                                   "content.code.copy"],
                      "palette": {"primary": "blue grey", "accent": "deep orange"}},
            "plugins": ["search", {"mkdocs-jupyter": {"include_requirejs": False, "custom_mathjax_url": "data:text/javascript,",  # no math
                                                      "toc_depth": 3, "highlight_extra_classes": "", "remove_tag_config": {}}}]}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--no-execute", action="store_true", help="render the notebooks as stored, without running them")
    ap.add_argument("--workers", type=int, default=2, help="notebooks run at once")
    args, nbs = ap.parse_args(), root / "nbs"
    side = yaml.safe_load((nbs / "sidebar.yml").read_text())["website"]["sidebar"]["contents"]
    files = [nbs / f for f in re.findall(r"[\w.-]+\.ipynb", yaml.safe_dump(side))]
    docs, site = root / "_build" / "book", root / "_site"
    shutil.rmtree(docs, ignore_errors=True); docs.mkdir(parents=True)
    (docs / "book.css").write_text(".md-grid { max-width: 92rem; }\n")  # the chapters' code is up to 120 characters wide
    big = lambda p: -p.stat().st_size  # the largest first: two workers finish together
    with ProcessPoolExecutor(args.workers) as ex:
        order = sorted(files, key=big)
        errs = {p.name: e for p, e in zip(order, ex.map(build, order, [docs] * len(order), [not args.no_execute] * len(order))) if e}
    (cfg := root / "_build" / "mkdocs.yml").write_text(yaml.safe_dump(config(nav(side), docs, site), sort_keys=False))
    shutil.rmtree(site, ignore_errors=True)
    quiet = os.environ | {"NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(cfg)], check=True, env=quiet)
    for name, e in errs.items(): print(f"{name} failed:\n{e}", file=sys.stderr)
    print(f"wrote {len(files)} pages to {site}/" + (f"; failed: {', '.join(errs)}" if errs else ""))
    sys.exit(1 if errs else 0)

if __name__ == "__main__": main()
