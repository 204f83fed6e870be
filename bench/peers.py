"The peers: numpy, torch eager and torch.compile in this process, tinygrad (DEV=CPU) in a child; each on its own threads or `--threads`."
import json, os, shutil, subprocess, sys
from functools import partial
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path
from .core import reference

def numpy_make(case, d:dict):
    "numpy's call for `case`: the reference itself, written as a numpy user would."
    return lambda: reference(case, d)

def _torch_mlp(torch, t:dict):
    "One Adam step of the torch MLP, from the weights in `t`, ending in `loss.item()`."
    lins = [torch.nn.Linear(*t[f"w{i}"].shape[::-1]) for i in (1, 2, 3)]
    with torch.no_grad():
        for i, l in enumerate(lins, 1): l.weight.copy_(t[f"w{i}"]); l.bias.copy_(t[f"b{i}"])
    model = torch.nn.Sequential(lins[0], torch.nn.ReLU(), lins[1], torch.nn.ReLU(), lins[2])
    opt, X, Y = torch.optim.Adam(model.parameters(), lr=1e-3), t["X"], t["Y"].long()
    def step():
        opt.zero_grad(); loss = torch.nn.functional.cross_entropy(model(X), Y); loss.backward(); opt.step()
        return loss.item()
    return step

def torch_make(case, d:dict, compiled=False):
    "torch's call for `case` on `d` (shared with numpy, read only), eager or through `torch.compile`."
    import torch, torch.nn.functional as F
    t, w = {k: torch.from_numpy(v) for k, v in d.items()}, case.workload
    if w == "mlp": return _torch_mlp(torch, t)
    if w == "decode":
        H, T, hd = t["kc"].shape; kc, vc, pos = t["kc"].clone(), t["vc"].clone(), case.p["pos"]
        def step():
            q, k, v = [(t["x"] @ t[w]).reshape(H, 1, hd) for w in ("wq", "wk", "wv")]
            kc[:, pos], vc[:, pos] = k[:, 0], v[:, 0]
            s = (q @ kc.transpose(1, 2) * hd**-.5).masked_fill(torch.arange(T) > pos, float("-inf")).softmax(-1)
            return (s @ vc).reshape(1, H * hd) @ t["wo"]
        return step
    if w == "launch":
        def chain(x=t["x"]):
            for _ in range(case.p["depth"]): x = x + 1
            return x
        return chain
    f = {"matmul": lambda a, b: a @ b, "conv2d": lambda x, w: F.conv2d(x, w, padding=1),
         "elementwise": lambda a, b, c: (a * b + c).relu().exp(), "softmax": lambda x: x.softmax(-1),
         "layernorm": lambda x: F.layer_norm(x, x.shape[-1:]),
         "matvec": lambda w, x, *s: ((w.int() * x.int()).sum(-1).float() * (s[0] * s[1])).sum(-1) if s else w.int() @ x.int() if x.dtype == torch.int8
         else w.float() @ x}[w]
    f, args = torch.compile(f) if compiled else f, list(t.values())
    return lambda: f(*args)

def _limit_blas(threads:int|None) -> str:
    "Limit numpy's BLAS to `threads` (None: its own count); return its libraries, kernels and threads as threadpoolctl sees them."
    from threadpoolctl import threadpool_info, threadpool_limits
    if threads: threadpool_limits(threads)
    blas = [b for b in threadpool_info() if b["user_api"] == "blas"]
    return "; ".join(f"{b['internal_api']} {b['version']} {b.get('architecture')} kernel, {b['num_threads']} threads"
                     for b in blas)

def load(quick=False, threads:int|None=None) -> tuple[dict, list[str], dict]:
    """The in-process peers as name -> (make, workloads), on `threads` (None: their own defaults), a note for each one
    left out, and their versions, BLAS and threads."""
    import numpy as np
    notes, info = [], {"numpy": np.__version__}
    peers = {"numpy": (numpy_make, {"matmul", "elementwise", "softmax", "layernorm", "matvec"})}
    if find_spec("threadpoolctl"): info["blas"] = _limit_blas(threads) or "none found"
    elif threads: notes.append(f"numpy: threadpoolctl not installed, BLAS threads not limited to {threads} (pip install -e '.[bench]')")
    if not find_spec("torch"): return peers, notes + ["torch, torch.compile: torch not installed"], info
    import torch
    if threads: torch.set_num_threads(threads)
    info["torch"] = f"{torch.__version__} ({torch.get_num_threads()} threads)"
    peers["torch"] = (torch_make, {"matmul", "conv2d", "elementwise", "softmax", "layernorm", "mlp", "launch", "matvec", "decode"})
    if quick: notes.append("torch.compile: skipped under --quick (its first call takes ~20 s)")
    else: peers["torch.compile"] = (partial(torch_make, compiled=True), {"elementwise", "softmax", "layernorm"})
    return peers, notes, info

TINYGRAD = ("matmul", "elementwise", "mlp", "launch")
def tinygrad_rows(workloads, quick=False, threads:int|None=None) -> tuple[list[dict], list[str], str|None]:
    """Rows of `python -m bench.tg` run with DEV=CPU (on `threads`: its NUM_CPU_THREADS), notes on what went wrong, and
    tinygrad's version (None: absent)."""
    if not find_spec("tinygrad"): return [], ["tinygrad: not installed (pip install -e '.[bench]')"], None
    v = version("tinygrad")
    if not shutil.which(os.getenv("CC", "clang")): return [], ["tinygrad: its CPU backend needs clang on PATH"], v
    if not (ws := [w for w in workloads if w in TINYGRAD]): return [], [], v
    cmd, env = [sys.executable, "-m", "bench.tg", *ws, *(["--quick"] if quick else [])], {**os.environ, "DEV": "CPU"} | ({"NUM_CPU_THREADS": str(threads)} if threads else {})
    root, timeout = Path(__file__).parent.parent, 300 if quick else 1800
    try: r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired as e: r, notes = e, [f"tinygrad: stopped after {timeout} s, later rows missing"]
    else: notes = [] if r.returncode == 0 else [f"tinygrad: exited with {r.returncode}; its log is above"]
    return [json.loads(l) for l in (r.stdout or b"").decode().splitlines() if l.startswith("{")], notes, v
