"""The notebooks in the test run: `nbdev_skips` and `nbdev_tests` say which cells and notebooks nbdev_test runs, by nbdev's own
rules (tools/book.py follows both); a session that collects tests/test_book.py starts tools/book.py at once, in the background, so
the notebooks run (each once) while the other tests do, and the book's tests come last. `slow` tests run only when `-m slow` asks."""
import os, re, signal, subprocess, sys
from configparser import ConfigParser
from pathlib import Path
from types import SimpleNamespace
import pytest

ROOT = Path(__file__).resolve().parent
cfg = ConfigParser(delimiters=["="])
cfg.read(ROOT / "settings.ini", encoding="utf-8")
TST_FLAGS = set(cfg["DEFAULT"]["tst_flags"].split())

def nbdev_skips(src: str) -> bool:
    ("Does nbdev_test skip a cell with source `src`? (its leading `#|` directives, read by nbdev's parser, name a `tst_flags` "
     "flag or `eval: false`; or it calls nbdev_export)")
    from nbdev.process import extract_directives  # the parser nbdev_test uses: `#|slow`, `#| eval:false`, a `%%time` line above
    d = extract_directives(SimpleNamespace(source=src), remove=False)
    return "nbdev_export(" in src or (d.get("eval:") or [""])[0].lower() == "false" or bool(TST_FLAGS & d.keys())

def nbdev_tests(nbs: Path) -> list[Path]:
    ("The notebooks `nbdev_test` runs in folder `nbs`: nbdev's glob (no name starting with `_` or `.`, subfolders too), none "
     "beside a `.notest` file, none whose frontmatter says `skip_exec`.")
    from nbdev.doclinks import nbglob
    from nbdev.process import NBProcessor, nb_lang
    from nbdev.frontmatter import FrontmatterProc
    from fastcore.basics import str2bool
    def runs(p: Path) -> bool:
        nb = NBProcessor(p, procs=FrontmatterProc, process=True).nb
        return not str2bool(getattr(nb, "frontmatter_", {}).get("skip_exec", False)) and nb_lang(nb) == "python"
    return [p for p in sorted(nbglob(str(nbs), as_path=True)) if not (p.parent / ".notest").exists() and runs(p)]

BOOK_LOG, BOOK = ROOT / "_build" / "book.log", pytest.StashKey[subprocess.Popen]()

def pytest_addoption(parser):
    parser.addoption("--book", choices=("run", "built"), default="run",
                     help="tests/test_book.py: run every notebook and build _site/ first (tools/book.py, in the background: "
                          "the default), or test the _site/ there is")

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a dev test `make slow` runs (the real model against llama.cpp, the course's copies run whole)")

def pytest_collection_modifyitems(config, items):
    slow = "slow" in (config.getoption("markexpr") or "")
    for item in items:
        if item.get_closest_marker("slow") and not slow: item.add_marker(pytest.mark.skip(reason="a slow dev test: `make slow` runs it"))
    items.sort(key=lambda item: item.path.name == "test_book.py")  # last: the notebooks run meanwhile

def pytest_collection_finish(session):
    "Start tools/book.py when the book's tests are to run (they wait for it): its output goes to _build/book.log."
    if session.config.getoption("--book") != "run" or session.config.option.collectonly: return
    if not any(i.path.name == "test_book.py" for i in session.items): return
    BOOK_LOG.parent.mkdir(exist_ok=True)
    with open(BOOK_LOG, "w") as log:  # its own session: the end of this one stops it and its workers
        session.config.stash[BOOK] = subprocess.Popen([sys.executable, str(ROOT / "tools" / "book.py"), "--timing"], cwd=ROOT,
                                                      stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

@pytest.fixture(scope="session")
def book_run(pytestconfig):
    "tools/book.py's exit status and output once it has finished (None when `--book built`)."
    if (p := pytestconfig.stash.get(BOOK, None)) is None: return None
    return p.wait(), BOOK_LOG.read_text(errors="replace")

def pytest_terminal_summary(terminalreporter, config):
    "Each notebook's time, the slowest cells and the book's summary line, from _build/book.log."
    if (p := config.stash.get(BOOK, None)) is None or p.poll() is None or not BOOK_LOG.exists(): return
    lines = BOOK_LOG.read_text(errors="replace").splitlines()
    keep = [ln for ln in lines if re.match(r"\s*\d+\.\ds ", ln) or ln.startswith(("slowest cells", "ran "))]
    terminalreporter.write_sep("-", "notebooks (tools/book.py: seconds each, in the order they finished)")
    for ln in keep: terminalreporter.write_line(ln)

def pytest_unconfigure(config):
    if (p := config.stash.get(BOOK, None)) is not None and p.poll() is None:  # the session ended early (-x, Ctrl-C)
        os.killpg(p.pid, signal.SIGTERM); p.wait()
