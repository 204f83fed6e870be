"""The ground floor's layering (DESIGN.md section 3), read from each module's imports with `ast`: the backends
(device.py, runtime/*) import the IR (uop, dtype, helpers) and never tensor or nn, directly or through a chain of
imports, and neither do the scheduler, codegen and renderer below them; helpers imports no tinybook module, dtype only
helpers, uop only helpers and dtype. A chain does not go through `tinybook/__init__.py` or
`tinybook/runtime/__init__.py`: a package's init imports its modules for their side effects (devices, methods)."""
import ast
from pathlib import Path
import pytest

PKG = Path(__file__).resolve().parent.parent / "tinybook"

def imports(path:Path, root:Path=PKG.parent) -> set[str]:
    "Dotted names of the tinybook modules the file at `path` (under `root`) imports directly, relative or absolute."
    parts, out = path.relative_to(root).with_suffix("").parts, set()
    pkg = parts[:-1]  # the package a relative import starts from (a package's __init__ included)
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Import): out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = ".".join(pkg[:len(pkg) - n.level + 1] + ((n.module,) if n.module else ())) if n.level else n.module
            out.add(base)
            out |= {f"{base}.{a.name}" for a in n.names}  # `from . import x` may name a module
    return {m for m in out if m == "tinybook" or m.startswith("tinybook.")}

def under(mods:set[str], *names:str) -> set[str]:
    "The modules of `mods` that are one of `names` or inside one of them."
    return {m for m in mods if any(m == n or m.startswith(n + ".") for n in names)}

PACKAGES = {"tinybook", "tinybook.runtime"}  # inits that import for side effects: not followed
def reach(path:Path, root:Path=PKG.parent) -> dict[str, list[str]]:
    "Each tinybook module the file at `path` reaches through imports (parent packages too), with a chain reaching it."
    chains, todo = {}, [(path, [])]
    while todo:
        f, chain = todo.pop()
        got = imports(f, root)
        for m in sorted(got | {".".join(m.split(".")[:k]) for m in got for k in range(2, m.count(".") + 1)}):
            p = root.joinpath(*m.split("."))
            file = next((g for g in (p.with_suffix(".py"), p / "__init__.py") if g.exists()), None)
            if m in chains or m in PACKAGES or file is None: continue  # None: a name `from pkg import` gave
            chains[m] = chain + [m]; todo.append((file, chains[m]))
    return chains

def tensor_chains(path:Path, root:Path=PKG.parent) -> list[str]:
    "The chains of imports from the file at `path` that reach tinybook.tensor or tinybook.nn, as `a -> b` strings."
    return [" -> ".join(c) for m, c in reach(path, root).items() if under({m}, "tinybook.tensor", "tinybook.nn")]

def test_imports_parsed():
    "The parser sees relative, absolute and side-effect imports (checked on files whose imports are known)."
    assert {"tinybook.helpers", "tinybook.dtype", "tinybook.uop"} <= imports(PKG / "tensor.py")
    assert "tinybook.runtime" in imports(PKG / "runtime" / "qcom.py")  # `import tinybook.runtime`
    assert "tinybook.device" in imports(PKG / "runtime" / "cpu.py")  # `from ..device import ...`

def test_violations_caught(tmp_path):
    "Each spelling of a forbidden import is seen: relative, absolute, side-effect, a module named by `from pkg import`."
    (f := tmp_path / "tinybook" / "runtime" / "x.py").parent.mkdir(parents=True)
    f.write_text("from ..tensor import Tensor\nimport tinybook.nn.state\nfrom tinybook import nn\nfrom . import cpu\n")
    got = imports(f, tmp_path)
    assert {"tinybook.tensor", "tinybook.nn.state", "tinybook.nn", "tinybook.runtime.cpu"} <= got
    bad = under(got, "tinybook.tensor", "tinybook.nn")
    assert {"tinybook.tensor", "tinybook.nn.state", "tinybook.nn"} <= bad and "tinybook.runtime.cpu" not in bad

BACKENDS = [PKG / "device.py", *sorted((PKG / "runtime").glob("*.py"))]
@pytest.mark.parametrize("path", BACKENDS, ids=lambda p: p.relative_to(PKG).as_posix())
def test_backends_stand_on_the_ir(path):
    assert not under(imports(path), "tinybook.tensor", "tinybook.nn"), f"{path.name} imports the Tensor API"

def test_chains_caught(tmp_path):
    "A chain through other modules is found and shown; the package inits, which import everything, are not followed."
    files = {"__init__.py": "from .tensor import Tensor\n", "tensor.py": "", "uop.py": "", "nn/__init__.py": "",
             "nn/state.py": "", "schedule.py": "from .uop import UOp\nfrom .tensor import Tensor\n",
             "device.py": "from .schedule import run\n", "runtime/__init__.py": "import tinybook.nn\n",
             "runtime/x.py": "from ..device import Allocator\n",
             "runtime/y.py": "from ..uop import UOp\nimport tinybook\n",
             "runtime/z.py": "from . import y\nimport tinybook.nn.state\n"}
    for name, text in files.items(): (f := tmp_path / "tinybook" / name).parent.mkdir(exist_ok=True); f.write_text(text)
    rt = tmp_path / "tinybook" / "runtime"
    assert tensor_chains(rt / "x.py", tmp_path) == ["tinybook.device -> tinybook.schedule -> tinybook.tensor"]
    assert tensor_chains(rt / "y.py", tmp_path) == []
    assert sorted(tensor_chains(rt / "z.py", tmp_path)) == ["tinybook.nn", "tinybook.nn.state"]

LOWER = [*BACKENDS, PKG / "engine.py", PKG / "schedule.py", PKG / "codegen.py", PKG / "renderer.py"]
@pytest.mark.parametrize("path", LOWER, ids=lambda p: p.relative_to(PKG).as_posix())
def test_no_chain_to_the_tensor(path):
    assert not (bad := tensor_chains(path)), f"{path.name} reaches the Tensor API: {bad[0]}"

@pytest.mark.parametrize("mod,allowed", [("helpers", set()), ("dtype", {"tinybook.helpers"}),
                                         ("uop", {"tinybook.helpers", "tinybook.dtype"})])
def test_ground_floor(mod, allowed):
    got = under(imports(PKG / f"{mod}.py"), "tinybook") - {f"tinybook.{mod}"}
    got = {m for m in got if not any(m.startswith(a + ".") for a in allowed)}  # `from .dtype import dtypes`
    assert got <= allowed, f"tinybook/{mod}.py imports {sorted(got - allowed)}: only {sorted(allowed)} lie below it"

def test_no_chapter_replaces():
    ("Importing the package runs every `patch_to` (00_helpers refuses a replacement by a package module); the one that "
     "extends an earlier chapter's method on purpose is 01a's `arange`, named in 01a's text.")
    import re, subprocess, sys
    r = subprocess.run([sys.executable, "-c", "import tinybook"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    extends = re.compile(r"@patch_to\([^)]*extends=True")
    uses = {p.name for p in PKG.rglob("*.py") if extends.search(p.read_text(encoding="utf-8"))}
    assert uses == {"elementwise.py"}, uses

# what `Tensor.realize` runs on the CPU, top down (the book's index tells this path); the IR floor is called by all
PATH = ["tensor", "engine", "schedule", "device", "runtime.cpu", "renderer", "codegen"]
FLOOR = {"helpers", "dtype", "uop"}

def calls_between_modules(fn) -> set[tuple[str, str]]:
    "(caller, callee) modules of every call `fn()` makes from one tinybook module into another (the floor aside)."
    import sys
    def mod(f):
        p = Path(f.f_code.co_filename)
        return ".".join(p.relative_to(PKG).with_suffix("").parts) if PKG in p.parents else None
    edges = set()
    def prof(frame, event, arg):
        if event != "call" or (m := mod(frame)) is None or m in FLOOR: return
        f = frame.f_back
        while f is not None and (mod(f) is None or mod(f) in FLOOR): f = f.f_back  # the nearest caller above the floor
        if f is not None and mod(f) != m: edges.add((mod(f), m))
    sys.setprofile(prof)
    try: fn()
    finally: sys.setprofile(None)
    return edges

def upward(edges:set) -> set:
    "The calls that do not go down PATH: into a module off the path, or back up to one entered before."
    return {(a, b) for a, b in edges if a not in PATH or b not in PATH or PATH.index(a) >= PATH.index(b)}

def test_realize_path():
    ("Realizing a new kernel on the CPU enters each module of PATH once, in order: every call from one module into "
     "another goes down the path (none climbs back), and the whole path is walked.")
    import numpy as np
    from tinybook import Tensor
    x = Tensor(np.random.default_rng(0).random((7, 13), dtype=np.float32), device="CPU").realize()
    y = (x * 3.25 + 1).exp2().sum(1)  # a kernel this process has not compiled
    edges = calls_between_modules(y.realize)
    assert not upward(edges), f"calls off or up the path: {sorted(upward(edges))}"
    walked = {("tensor", "engine"), ("engine", "schedule"), ("engine", "device"), ("device", "runtime.cpu"),
              ("runtime.cpu", "renderer"), ("runtime.cpu", "codegen")}
    assert walked <= edges, f"the path was not walked: {sorted(walked - edges)} missing"
    np.testing.assert_allclose(y.numpy(), np.exp2(x.numpy() * 3.25 + 1).sum(1), rtol=1e-5)

def test_upward_call_caught():
    "The probe sees a call climbing back: 03's `run_schedule` handed the engine's `run_one` calls up into the engine."
    import numpy as np
    from tinybook import Tensor
    from tinybook.schedule import schedule_uops, run_schedule
    from tinybook.engine import run_one
    items, _ = schedule_uops([(Tensor(np.ones(5, np.float32), device="CPU") * 2).uop])
    assert ("schedule", "engine") in upward(calls_between_modules(lambda: run_schedule(items, run_one)))
