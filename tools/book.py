#!/usr/bin/env python3
"""`make book` and the test run of every notebook: execute the notebooks (two at a time) and render them with MkDocs (Material theme,
mkdocs-jupyter) as a static site in _site/: parts and order from nbs/sidebar.yml, previous/next links, a table of contents per page,
search, highlighted code, and nothing fetched from the network. It runs what nbdev_test runs, as nbdev_test runs it: the same notebooks
(those not in the sidebar too, run but not rendered), the same cells (those nbdev_test skips, the hardware flags, `#| bench`,
`#| model`, `#| eval: false`, are shown but not run; what they measured reaches the book through the result files in nbs/results/ that
the next cells display), in nbs/ with IN_TEST=1, each in a kernel of its own. A failing cell fails the run and is named (notebook, cell
number in the .ipynb, first line, traceback); each notebook's time is printed, `--timing` adds the slowest cells. `--no-execute`
renders the notebooks as stored (outputs stripped) in seconds; `book.py nbs/index.ipynb` runs that notebook only. The book's API index
(api.md, placed by the sidebar) is written from the package: each public name linked to the section that defines it."""
import os, re, io, ast, sys, time, tempfile, bisect, shutil, inspect, argparse, functools, importlib, subprocess, tokenize
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
import yaml, nbformat
from nbclient import NotebookClient
from traitlets.config import Config
import mkdocs_jupyter.convert  # noqa: F401  its heading ids (lower case), which its tables of contents link
from nbconvert.filters.markdown_mistune import markdown2html_mistune

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root))
from conftest import nbdev_skips, nbdev_tests  # noqa: E402  the cells nbdev_test skips, the notebooks it runs

EXPORTED = "# exported to tinybook."  # the first line of an exported cell's code on its page, then the module's name

def tidy(nb, name:str="") -> None:
    "Drop `#| hide` and `#| default_exp` cells, the code of `#| echo: false` cells (their output stays), the `#|` directives of the "
    "others (an exported cell's becomes its first line, `EXPORTED` and the module, and says so when it is a course exercise) and "
    "the title cell's frontmatter (`- order: 3`), after which notebook `name`'s page, if it has exercises, says how to build it; "
    "links to notebooks go to their pages; headings lose their backticks (mkdocs-jupyter's table of contents drops code from the "
    "anchors it links, nbconvert's heading ids keep it)."
    mod = next((m[1] for c in nb.cells if (m := re.match(r"#\|\s*default_exp\s+([\w.]+)", c.source.lstrip()))), None)
    nb.cells = [c for c in nb.cells if not re.match(r"#\|\s*(hide|default_exp)\b", c.source.lstrip())]
    exercises = sum(bool(re.search(r"^#\|\s*exercise\b", c.source, re.M)) for c in nb.cells if c.cell_type == "code")
    for c in nb.cells:
        if c.cell_type == "code":
            if re.search(r"^#\|\s*echo:\s*false\b", c.source, re.M): c.metadata.setdefault("tags", []).append("echo-false")
            exp = re.search(r"^#\|\s*export[is]?\b[ \t]*([\w.]*)", c.source, re.M)
            ex = " (a course exercise)" * bool(re.search(r"^#\|\s*exercise\b", c.source, re.M))
            c.source = re.sub(r"^#\|.*\n?", "", c.source, flags=re.M).strip()
            if exp: c.source = f"{EXPORTED}{exp[1] or mod}{ex}\n{c.source}"  # the package's code, not a check of it
        else:
            c.source = re.sub(r"\]\((?:\.\./)?(?:nbs/)?([\w.-]+)\.ipynb(#[\w-]*)?\)", r"](\1.html\2)", c.source)
            c.source = re.sub(r"^#{1,6} .*$", lambda m: m[0].replace("`", ""), c.source, flags=re.M)
    if md := next((c for c in nb.cells if c.cell_type == "markdown"), None): md.source = re.sub(r"^- \w+: .*\n?", "", md.source, flags=re.M)
    if md and exercises:
        md.source = (md.source.rstrip() + f"\n\n**Build it yourself:** the {exercises} cells marked *a course exercise* are the functions "
                     f"a learner writes; `tinybook course start {name}` makes the copy with them empty ([the course](11_course.html)).")

def build(path:Path, out:Path|None, execute:bool) -> tuple[str|None, float, list]:
    "Run notebook `path` (unless not `execute`), tidy it and write it to folder `out` (if any): the error that stopped it (or None), "
    "the seconds it took, and (seconds, cell number) for each cell run."
    nb, err, t0, times, cur = nbformat.read(path, as_version=4), None, time.perf_counter(), [], {}
    for c in nb.cells:
        if c.cell_type == "code" and nbdev_skips(c.source): c.metadata.setdefault("tags", []).append("skip-execution")
    if execute:
        def start(cell, cell_index): cur.update(i=cell_index, t=time.perf_counter())
        def done(cell, cell_index, execute_reply): times.append((time.perf_counter() - cur["t"], cell_index))
        cfg, tmp = Config(), tempfile.TemporaryDirectory()  # the kernel's sockets as files there: no two kernels race for a TCP port
        cfg.KernelManager.transport, cfg.KernelManager.ip = "ipc", f"{tmp.name}/kernel"
        client = NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},  # cwd nbs/
                                config=cfg, on_cell_execute=start, on_cell_executed=done)
        try:
            with tmp: client.execute()
        except Exception as e:  # a failing cell (CellExecutionError), a timeout, a kernel that died
            first = nb.cells[cur["i"]].source.splitlines()[0] if "i" in cur and nb.cells[cur["i"]].source else ""
            err = f"{os.path.relpath(path, root)} cell {cur.get('i', '?')} ({first[:80]}): {type(e).__name__}\n{e}"
    if out is not None: tidy(nb, path.stem); nbformat.write(nb, out / path.name)
    return err, time.perf_counter() - t0, times

@functools.cache
def defs(py:Path) -> dict:
    "{name: (line, note)} for each def, class and assignment at the top level of module file `py`; the note is a docstring, or an "
    "assignment's comment (on its line, else the comment lines right above it)."
    src = py.read_text(encoding="utf-8")
    lines, notes = src.splitlines(), {t.start[0]: t.string[1:].strip() for t in tokenize.generate_tokens(io.StringIO(src).readline)
                                      if t.type == tokenize.COMMENT and not t.string.startswith("# %%")}
    def above(i): return above(i - 1) + [notes[i]] if i in notes and lines[i - 1].lstrip().startswith("#") else []
    out = {}
    for n in ast.parse(src).body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(n.name, (n.lineno, ast.get_docstring(n)))
        elif isinstance(n, (ast.Assign, ast.AnnAssign)):
            for t in ast.walk(ast.Tuple(n.targets) if isinstance(n, ast.Assign) else n.target):
                if isinstance(t, ast.Name): out.setdefault(t.id, (n.lineno, notes.get(n.lineno) or " ".join(above(n.lineno - 1))))
    return out

def patched(classes, mods) -> list:
    "(module, `Class.method`, function) for each public method (or operator) of `classes` that one of modules `mods` added after the "
    "class body (`patch_to`, `setattr` in a loop): its function's qualified name is not under the class's."
    out = []
    for c in classes:
        for k, v in vars(c).items():
            f = getattr(v, "fget", None) or getattr(v, "func", None) or getattr(v, "__func__", None) or v  # property, cached_property
            if inspect.isfunction(f) and f.__module__ in mods and not f.__qualname__.startswith(c.__qualname__ + ".") \
               and (k[0] != "_" or k.endswith("__")): out.append((f.__module__, f"{c.__name__}.{k}", f))
    return out

@functools.cache
def marks(py:Path) -> list:
    "[(line, notebook, cell id)] for the `# %% ../nbs/x.ipynb #id` line nbdev writes above each cell it exports to module file `py`."
    src = py.read_text(encoding="utf-8")
    return [(src.count("\n", 0, m.start()) + 1, (py.parent / m[1]).resolve(), m[2])
            for m in re.finditer(r"^# %% (\S+\.ipynb) #(\w+)$", src, re.M)]

@functools.cache
def headings(nb:Path) -> dict:
    "{cell id: the last Markdown heading above that cell} in notebook `nb`."
    out, cur = {}, ""
    for c in nbformat.read(nb, as_version=4).cells:
        out[c.get("id")] = cur
        if c.cell_type == "markdown": cur = ([""] + re.findall(r"^#{1,6} .*$", c.source, re.M))[-1] or cur
    return out

def where(py:Path, line:int) -> tuple[Path, str, str]:
    "(notebook, heading, its anchor) of the chapter section whose cell holds line `line` of module file `py` (its first cell for 0)."
    _, nb, cid = marks(py)[max(bisect.bisect_right([ln for ln, *_ in marks(py)], line) - 1, 0)]
    h = headings(nb)[cid].replace("`", "")  # as `tidy` leaves it
    return nb, h.lstrip("#").strip(), re.search(r'id="([^"]*)"', markdown2html_mistune(h))[1] if h else ""

def one_line(s:str|None) -> str:
    "The first paragraph of docstring or comment `s` on one line, for a Markdown table cell (`|` and `<` escaped outside code)."
    s = " ".join((s or "").strip().split("\n\n")[0].split())
    return re.sub(r"(`[^`]*`)|[<|]", lambda m: m[1] or {"<": "&lt;", "|": r"\|"}[m[0]], s)

def api_index(pkg:Path) -> str:
    "The API index page (Markdown) of the modules nbdev wrote to package folder `pkg`: each module's `__all__` and the methods it adds "
    "to classes, alphabetically, each linked to the chapter section above the cell that defines it, with its docstring or comment."
    files = {".".join(p.relative_to(pkg.parent).with_suffix("").parts).removesuffix(".__init__"): p for p in sorted(pkg.rglob("*.py"))}
    files = {m: p for m, p in files.items() if "# AUTOGENERATED! DO NOT EDIT!" in p.read_text(encoding="utf-8")}
    mods = {m: importlib.import_module(m) for m in files}
    rows = {m: [(n, p, *defs(p).get(n, (0, ""))) for n in getattr(mods[m], "__all__", [])] for m, p in files.items()}
    classes = {v for mod in mods.values() for v in vars(mod).values()
               if isinstance(v, type) and v.__module__ in mods and v.__name__[0] != "_"}
    for m, name, f in patched(classes, mods): rows[m].append((name, Path(f.__code__.co_filename), f.__code__.co_firstlineno, f.__doc__))
    out = ["# API index\n", "Every public name of the `tinybook` package, by module in chapter order, then alphabetically: a module's "
           "`__all__` and the methods it adds to classes (`Tensor.sum` comes with `tinybook.reduce`), each linked to the section of the "
           "chapter whose cell defines it, with its docstring's first paragraph (or a constant's comment). `tools/book.py` writes this "
           "page from the package each time it builds the book.\n"]
    for m in sorted(files, key=lambda m: (marks(files[m])[0][1].name, m)):
        nb = marks(files[m])[0][1]
        out += [f"## {m}\n", f"{one_line(mods[m].__doc__)} ([{nb.stem}]({nb.name}))\n",
                "| Name | Section | What it is |", "|---|---|---|"]
        for n, py, line, doc in sorted(rows[m], key=lambda r: r[0].lower()):
            nb, h, a = where(py, line)
            out.append(f"| [`{n}`]({nb.name}#{a}) | {one_line(h)} | {one_line(doc)} |")
        out.append("")
    return "\n".join(out)

# seconds a notebook took in a cold run on 2 busy cores (2026-12): the slowest start first, the rest by size, so both workers end together
SLOW = {"test_backends": 380, "10_onnx": 110, "01a_elementwise": 70, "01b_reduce": 60, "01c_functional": 60, "02_autograd": 60,
        "test_devices": 60, "09b_model": 50, "08_jit": 50, "05a_cpu": 40, "02c_optim": 35, "09a_tokenizer": 35, "09c_serve": 25,
        "09d_bench": 20}

def nav(items:list) -> list:
    "sidebar.yml's `contents` as MkDocs' `nav`: a page is its file (titled by its first heading), a part is {name: [pages]}."
    return [{it["section"]: nav(it["contents"])} if isinstance(it, dict) else it for it in items]

# a chapter's code is up to 120 characters wide, its checks a little wider: at a 1280-pixel window the table of contents
# goes into the left sidebar (`toc.integrate`), prompts go, code is 12 pixels high, and a line still too long wraps
CSS = """.md-grid { max-width: 92rem; }
.jupyter-wrapper .jp-InputPrompt, .jupyter-wrapper .jp-OutputPrompt { display: none !important; }
.highlight-ipynb pre, .jp-OutputArea pre, .jp-RenderedMarkdown pre { font-size: 0.6rem; }
.highlight-ipynb pre, .jp-RenderedMarkdown pre { white-space: pre-wrap; }
"""

def config(pages:list, docs:Path, site:Path) -> dict:
    return {"site_name": "tinybook", "site_description": "A deep-learning stack built in notebooks, the way tinygrad does it",
            "docs_dir": str(docs), "site_dir": str(site), "use_directory_urls": False, "nav": pages, "extra_css": ["book.css"],
            "theme": {"name": "material", "font": False,  # no Google Fonts: the site works offline
                      "features": ["navigation.sections", "navigation.footer", "navigation.top", "toc.follow", "toc.integrate",
                                   "search.highlight", "content.code.copy"],
                      "palette": {"primary": "blue grey", "accent": "deep orange"}},
            "plugins": ["search", {"mkdocs-jupyter": {"include_requirejs": False, "custom_mathjax_url": "data:text/javascript,",  # no math
                                                      "toc_depth": 3, "highlight_extra_classes": "",
                                                      "remove_tag_config": {"remove_input_tags": ["echo-false"]}}}]}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", nargs="*", type=Path, help="run only these notebooks, render the others as stored")
    ap.add_argument("--no-execute", action="store_true", help="render the notebooks as stored, without running them")
    ap.add_argument("--workers", type=int, default=2, help="notebooks run at once")
    ap.add_argument("--timing", action="store_true", help="also print the slowest cells")
    args, nbs = ap.parse_args(), root / "nbs"
    run = {p.resolve() for p in args.run}  # before the chdir below
    os.chdir(root)  # nbdev's config (the notebooks nbdev_test runs) is found from here
    side = yaml.safe_load((nbs / "sidebar.yml").read_text())["website"]["sidebar"]["contents"]
    pages = [nbs / f for f in re.findall(r"[\w.-]+\.ipynb", yaml.safe_dump(side))]
    tested = {p.resolve() for p in nbdev_tests(nbs)}
    docs, site = root / "_build" / "book", root / "_site"
    shutil.rmtree(docs, ignore_errors=True); docs.mkdir(parents=True)
    (docs / "book.css").write_text(CSS)
    jobs = {p: (docs if p in pages else None, p in tested & (run or tested) and not args.no_execute)
            for p in pages + sorted(tested - set(pages))}
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
    (docs / "api.md").write_text(api_index(root / "tinybook"), encoding="utf-8")
    (cfg := root / "_build" / "mkdocs.yml").write_text(yaml.safe_dump(config(nav(side), docs, site), sort_keys=False))
    shutil.rmtree(site, ignore_errors=True)
    quiet = os.environ | {"NO_MKDOCS_2_WARNING": "1"}  # Material's notice about its successor
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(cfg)], env=quiet).returncode == 0
    if args.timing: print("slowest cells:\n" + "\n".join(f"{s:6.1f}s {name}" for s, name in sorted(cells, reverse=True)[:20]), flush=True)
    for e in errs.values(): print(f"\nFAILED {e}", file=sys.stderr, flush=True)
    print(f"ran {sum(o[1] for o in jobs.values())} notebooks in {sum(secs.values()):.0f} s of kernel time; " +
          (f"wrote {len(pages) + 1} pages to {site}/" if built else "MkDocs failed") + (f"; failed: {', '.join(errs)}" if errs else ""))
    sys.exit(0 if built and not errs else 1)

if __name__ == "__main__": main()
