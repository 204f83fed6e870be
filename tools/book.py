#!/usr/bin/env python3
"""`make book` and the test run of every notebook: execute the notebooks (two at a time) and render them with MkDocs (Material theme,
mkdocs-jupyter) as a static site in _site/: parts and order from nbs/sidebar.yml, previous/next links, a table of contents per page,
search, highlighted code, and nothing fetched from the network. It runs what nbdev_test runs, as nbdev_test runs it: the same notebooks
(those not in the sidebar too, run but not rendered), the same cells (those nbdev_test skips, the hardware flags, `#| bench`,
`#| model`, `#| eval: false`, are shown but not run; what they measured reaches the book through the result files in nbs/results/ that
the next cells display), in nbs/ with IN_TEST=1, each in a kernel of its own. A failing cell fails the run and is named (notebook, cell
number in the .ipynb, first line, traceback); each notebook's time is printed, `--timing` adds the slowest cells. `--no-execute`
renders the notebooks as stored (outputs stripped) in seconds."""
import os, re, sys, time, shutil, argparse, subprocess
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
import yaml, nbformat
from nbclient import NotebookClient

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root))
from conftest import nbdev_skips, nbdev_tests  # noqa: E402  the cells nbdev_test skips, the notebooks it runs

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

def build(path:Path, out:Path|None, execute:bool) -> tuple[str|None, float, list]:
    "Run notebook `path` (unless not `execute`), tidy it and write it to folder `out` (if any): the error that stopped it (or None), "
    "the seconds it took, and (seconds, cell number) for each cell run."
    nb, err, t0, times, cur = nbformat.read(path, as_version=4), None, time.perf_counter(), [], {}
    for c in nb.cells:
        if c.cell_type == "code" and nbdev_skips(c.source): c.metadata.setdefault("tags", []).append("skip-execution")
    if execute:
        def start(cell, cell_index): cur.update(i=cell_index, t=time.perf_counter())
        def done(cell, cell_index, execute_reply): times.append((time.perf_counter() - cur["t"], cell_index))
        client = NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},  # cwd nbs/
                                extra_arguments=["--IPKernelApp.log_level=ERROR"],  # not its warning about TCP on loopback
                                on_cell_execute=start, on_cell_executed=done)
        try: client.execute()
        except Exception as e:  # a failing cell (CellExecutionError), a timeout, a kernel that died
            first = nb.cells[cur["i"]].source.splitlines()[0] if "i" in cur and nb.cells[cur["i"]].source else ""
            err = f"{os.path.relpath(path, root)} cell {cur.get('i', '?')} ({first[:80]}): {type(e).__name__}\n{e}"
    if out is not None: tidy(nb); nbformat.write(nb, out / path.name)
    return err, time.perf_counter() - t0, times

# seconds a notebook took in a cold run on 2 busy cores (2026-12): the slowest start first, the rest by size, so both workers end together
SLOW = {"test_backends": 380, "01_ops": 180, "10_onnx": 110, "02_autograd": 60, "test_devices": 60, "09b_model": 50, "08_jit": 50,
        "05a_cpu": 40, "02c_optim": 35, "09a_tokenizer": 35, "09c_serve": 25, "09d_bench": 20}

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
    ap.add_argument("--timing", action="store_true", help="also print the slowest cells")
    args, nbs = ap.parse_args(), root / "nbs"
    os.chdir(root)  # nbdev's config (the notebooks nbdev_test runs) is found from here
    side = yaml.safe_load((nbs / "sidebar.yml").read_text())["website"]["sidebar"]["contents"]
    pages = [nbs / f for f in re.findall(r"[\w.-]+\.ipynb", yaml.safe_dump(side))]
    tested = {p.resolve() for p in nbdev_tests(nbs)}
    docs, site = root / "_build" / "book", root / "_site"
    shutil.rmtree(docs, ignore_errors=True); docs.mkdir(parents=True)
    (docs / "book.css").write_text(".md-grid { max-width: 92rem; }\n")  # the chapters' code is up to 120 characters wide
    jobs = {p: (docs if p in pages else None, p in tested and not args.no_execute) for p in pages + sorted(tested - set(pages))}
    jobs = {p: o for p, o in jobs.items() if o[0] is not None or o[1]}
    os.environ["IN_TEST"] = "1"  # as nbdev_test sets it for the notebooks it runs (nbdev_export and friends do nothing)
    errs, secs, cells = {}, {}, []
    with ProcessPoolExecutor(args.workers) as ex:
        futs = {ex.submit(build, p, *jobs[p]): p for p in sorted(jobs, key=lambda p: (-SLOW.get(p.stem, 0), -p.stat().st_size))}
        for f in as_completed(futs):
            p = futs[f]; err, secs[p.name], t = f.result()
            cells += [(s, f"{p.name} cell {i}") for s, i in t]
            if err: errs[p.name] = err
            if jobs[p][1]: print(f"{secs[p.name]:6.1f}s {p.name}" + (" FAILED" if err else ""), flush=True)
    (cfg := root / "_build" / "mkdocs.yml").write_text(yaml.safe_dump(config(nav(side), docs, site), sort_keys=False))
    shutil.rmtree(site, ignore_errors=True)
    quiet = os.environ | {"NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(cfg)], env=quiet).returncode == 0
    if args.timing: print("slowest cells:\n" + "\n".join(f"{s:6.1f}s {name}" for s, name in sorted(cells, reverse=True)[:20]), flush=True)
    for e in errs.values(): print(f"\nFAILED {e}", file=sys.stderr, flush=True)
    print(f"ran {sum(o[1] for o in jobs.values())} notebooks in {sum(secs.values()):.0f} s of kernel time; " +
          (f"wrote {len(pages)} pages to {site}/" if built else "MkDocs failed") + (f"; failed: {', '.join(errs)}" if errs else ""))
    sys.exit(0 if built and not errs else 1)

if __name__ == "__main__": main()
