"Cases, inputs, numpy references, the timer and the correctness check that every side of the benchmark shares."
import gc, statistics, sys, time
import numpy as np

WORKLOADS = ("matmul", "conv2d", "elementwise", "softmax", "layernorm", "mlp", "launch", "matvec", "decode")
LAUNCH = (("chain", "32 deps, 1 realize"), ("each", "32 realizes"), ("jit", "32 deps, TinyJit"))
MLP = (("eager", ""), ("jit", " TinyJit"))
MATVEC = ("fp32 W", "fp16 W", "int8 W", "int8 W·x", "Q8_0 W·x")  # weights fp32, fp16 or int8 (converted in the kernel), int8 times int8
# activations in int32, or both in GGUF's Q8_0 blocks: 32 int8 values and a float scale, each block's int32 sum scaled (a reduce inside a reduce)  # the training step as written, and replayed by TinyJit (its peers: torch eager, tinygrad.jit)

class NotAvailable(Exception): "A case this side cannot run yet; its row says n/a with the reason."

class Case:
    "One workload at one size: parameters `p`, its table `label`, and the `work` that turns seconds into `unit`."
    def __init__(self, workload, label, work, unit, **p):
        self.workload, self.label, self.work, self.unit, self.p = workload, label, work, unit, p
    def metric(self, s:float) -> float:
        "`s` seconds per call in this case's unit: GFLOPS or GB/s from `work`, else ms per step or us per kernel."
        return {"ms/step": s * 1e3, "us/kernel": s * 1e6 / self.work}.get(self.unit, self.work / s / 1e9)
    def __repr__(self): return f"{self.workload} {self.label}"

def cases(workloads, quick=False) -> list[Case]:
    "The cases of `workloads` in table order; `quick` makes every size small."
    out, sizes = [], (64,) if quick else (512, 1024, 2048)
    for w in workloads:
        if w == "matmul": out += [Case(w, f"N={n}", 2 * n**3, "GFLOPS", N=n) for n in sizes]
        if w == "conv2d":
            n, c, h = (2, 8, 8) if quick else (8, 64, 56)  # a ResNet stage-1 3x3 layer
            out.append(Case(w, f"{n}x{c}x{h}x{h} 3x3 p1", 2 * n * c * c * 9 * h * h, "GFLOPS", shape=(n, c, h, h)))
        if w == "elementwise":  # 16 B per element: 3 reads and 1 write of fp32
            n = 2**20 if quick else 2**24; out.append(Case(w, f"{n >> 20}M fp32", 16 * n, "GB/s", n=n))
        if w in ("softmax", "layernorm"):  # 8 B per element: 1 read and 1 write
            r = 64 if quick else 4096; out.append(Case(w, f"{r}x{r} fp32", 8 * r * r, "GB/s", shape=(r, r)))
        if w == "mlp":
            b = 32 if quick else 256; out += [Case(w, f"784-512-512-10 b{b}{label}", 1, "ms/step", batch=b, mode=m) for m, label in MLP]
        if w == "launch": out += [Case(w, label, 32, "us/kernel", depth=32, mode=m) for m, label in LAUNCH]
        if w == "matvec":  # an LLM's decode: weights (fp32, or fp16 or int8 converted in the kernel) times one activation vector
            n = 256 if quick else 4096; out += [Case(w, f"{n}x{n} {t}", 2 * n * n, "GFLOPS", N=n, kind=t) for t in MATVEC]
        if w == "decode":  # one attention layer's decode step at position `pos` of a KV cache of T positions, replayed by TinyJit
            T, D = (64, 64) if quick else (2048, 512)
            out += [Case(w, f"pos {p} of {T}", 1, "ms/step", T=T, D=D, H=8, pos=p) for p in ((7, T - 1) if quick else (63, 511, T - 1))]
    return out

def inputs(case:Case) -> dict[str, np.ndarray]:
    "The float32 (labels: int32) arrays `case` runs on, the same in every process (seeded)."
    rng, w, p = np.random.default_rng(0), case.workload, case.p
    f32 = lambda *s: rng.random(s, dtype=np.float32)
    if w == "matmul": return dict(a=f32(p["N"], p["N"]), b=f32(p["N"], p["N"]))
    if w == "conv2d": return dict(x=f32(*p["shape"]) - 0.5, w=f32(p["shape"][1], p["shape"][1], 3, 3) - 0.5)
    if w == "elementwise": return dict(a=f32(p["n"]), b=f32(p["n"]), c=f32(p["n"]))
    if w in ("softmax", "layernorm"): return dict(x=rng.standard_normal(p["shape"], dtype=np.float32))
    if w == "launch": return dict(x=np.ones(16, np.float32))
    if w == "matvec":
        n, i8 = p["N"], lambda *s: rng.integers(-128, 128, s, dtype=np.int8)
        if p["kind"] == "Q8_0 W·x": return dict(w=i8(n, n // 32, 32), x=i8(n // 32, 32), d=f32(n, n // 32) / 64, dx=f32(n // 32) / 64)
        w = (f32(n, n) - 0.5).astype(np.float16 if p["kind"] == "fp16 W" else np.float32) if p["kind"][:2] == "fp" else i8(n, n)
        return dict(w=w, x=i8(n) if p["kind"] == "int8 W·x" else f32(n) - 0.5)
    if w == "decode":
        D, T, hd = p["D"], p["T"], p["D"] // p["H"]
        return dict(x=f32(1, D) - 0.5, **{k: (f32(D, D) - 0.5) / D**.5 for k in ("wq", "wk", "wv", "wo")},
                    kc=f32(p["H"], T, hd) - 0.5, vc=f32(p["H"], T, hd) - 0.5)
    dims, d = (784, 512, 512, 10), dict(X=rng.standard_normal((p["batch"], 784), dtype=np.float32))
    d["Y"] = rng.integers(0, 10, p["batch"], dtype=np.int32)
    for i, (fi, fo) in enumerate(zip(dims, dims[1:]), 1):  # torch's Linear init: uniform in +-1/sqrt(fan_in)
        d[f"w{i}"], d[f"b{i}"] = (2 * f32(fo, fi) - 1) / fi**.5, (2 * f32(fo) - 1) / fi**.5
    return d

def _conv(x, w):
    "3x3 convolution with padding 1 as one matmul over sliding windows."
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # (N, C, H, W, 3, 3)
    return np.tensordot(win, w, axes=([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)
def _softmax(x): e = np.exp(x - x.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
def _layernorm(x): y = x - x.mean(-1, keepdims=True); return y / np.sqrt((y * y).mean(-1, keepdims=True) + 1e-5)
def _mlp_loss(d):
    "Cross-entropy of the MLP at its initial weights: what the first training step must report."
    h = d["X"]
    for i in (1, 2, 3): h = h @ d[f"w{i}"].T + d[f"b{i}"]; h = np.maximum(h, 0) if i < 3 else h
    z = h - h.max(1, keepdims=True); lp = z - np.log(np.exp(z).sum(1, keepdims=True))
    return -lp[np.arange(len(d["Y"])), d["Y"]].mean()

def _decode(d:dict, pos:int) -> np.ndarray:
    "The decode step: q, k, v of `x`; k and v written at `pos` of copies of the caches; attention over positions 0..pos; output projection."
    H, T, hd = d["kc"].shape
    q, k, v = [(d["x"] @ d[w]).reshape(H, 1, hd) for w in ("wq", "wk", "wv")]
    kc, vc = d["kc"].copy(), d["vc"].copy(); kc[:, pos], vc[:, pos] = k[:, 0], v[:, 0]
    s = np.where(np.arange(T) <= pos, q @ kc.transpose(0, 2, 1) / hd**.5, -np.inf)
    return (_softmax(s) @ vc).reshape(1, H * hd) @ d["wo"]

def reference(case:Case, d:dict) -> np.ndarray:
    "numpy's answer for `case` on inputs `d`; for matmul, elementwise, softmax and layernorm also the numpy peer."
    w = case.workload
    if w == "matmul": return d["a"] @ d["b"]
    if w == "conv2d": return _conv(d["x"], d["w"])
    if w == "elementwise": return np.exp(np.maximum(d["a"] * d["b"] + d["c"], 0))
    if w == "softmax": return _softmax(d["x"])
    if w == "layernorm": return _layernorm(d["x"])
    if w == "mlp": return np.asarray(_mlp_loss(d))
    if w == "matvec" and "d" in d: return ((d["w"].astype(np.int32) * d["x"]).sum(-1) * (d["d"] * d["dx"])).sum(-1)
    if w == "matvec": return d["w"].astype(np.int32) @ d["x"].astype(np.int32) if d["x"].dtype == np.int8 else d["w"].astype(np.float32) @ d["x"]
    if w == "decode": return _decode(d, case.p["pos"])
    return d["x"] + case.p["depth"]

def check(out, ref:np.ndarray, tol=1e-3) -> None:
    "Raise if `out` (array, tensor or float) is off `ref` by more than `tol` times `ref`'s largest magnitude."
    out = out.numpy() if hasattr(out, "numpy") else np.asarray(out)
    if out.shape != ref.shape: raise ValueError(f"wrong result: shape {out.shape}, numpy says {ref.shape}")
    err = float(np.abs(out.astype(np.float64) - ref).max() / max(float(np.abs(ref).max()), 1e-30))
    if not err <= tol: raise ValueError(f"wrong result: max error {err:.2g} of max |numpy| (allowed {tol:g})")

def chain(x, depth:int, each=False):
    "`depth` dependent `x + 1` kernels on a tinybook or tinygrad `x`: each realized (`each`), or all in one realize."
    for _ in range(depth): x = (x + 1).realize() if each else (x + 1).contiguous()
    return x.realize()

def _secs(fn) -> float: t0 = time.perf_counter(); fn(); return time.perf_counter() - t0
def prepare(case:Case, impl:str, make, d:dict, ref:np.ndarray, counters=None) -> tuple[dict, object]:
    """The row of `impl` on `case` and its call: `make(case, d)` builds it, a first call (compiles) is checked against
    `ref`, 2 warm-ups follow (a JIT captures); a failure or n/a goes into the row, and the call is None."""
    row = dict(workload=case.workload, label=case.label, impl=impl, unit=case.unit)
    try:
        run = make(case, d) if counters is None else counted(make(case, d), counters)
        t0 = time.perf_counter(); out = run(); row["first_s"] = time.perf_counter() - t0
        check(out, ref)
        row["warm_s"] = min(_secs(run) for _ in range(2))
        return row, run
    except NotAvailable as e: row["na"] = str(e)
    except Exception as e: row["error"] = f"{type(e).__name__}: {e}".strip()
    print(f"{impl:>14} {case}: {(row.get('na') or row['error']).splitlines()[0]}", file=sys.stderr, flush=True)
    return row, None

ROUNDS, ROUND_S, WARM_S = 5, 0.3, 0.12
def timed(case:Case, prepared:list[tuple[dict, object]], quick=False) -> list[dict]:
    """The rows of `prepare`d calls, timed in turns: `ROUNDS` rounds of about `ROUND_S` seconds of each call (1 to 10
    calls), so a machine that slows down midway (a neighbour on the host) slows every side alike; the median of all.
    Each turn starts with `WARM_S` seconds of untimed calls: after its last call a peer's BLAS threads spin on for
    0.1 s (OpenBLAS's default), taking a core from whichever side runs next."""
    live, ts = [(r, f) for r, f in prepared if f], {}
    gc.collect(); gc.freeze()  # else a full collection (~50 ms with torch loaded) can land inside a timed call
    for _ in range(1 if quick else ROUNDS):
        for r, f in live:
            end = time.perf_counter() + WARM_S * (not quick)
            while time.perf_counter() < end: f()
            ts.setdefault(r["impl"], []).extend(_secs(f) for _ in range(2 if quick else min(10, max(1, int(ROUND_S / r["warm_s"])))))
    for r, f in live:
        t = ts[r["impl"]]
        r.update(median_s=statistics.median(t), min_s=min(t), reps=len(t), kernels=getattr(f, "kernels", None))
        r["metric"] = case.metric(r["median_s"])
        print(f"{r['impl']:>14} {case}: {r['metric']:.4g} {case.unit}", file=sys.stderr, flush=True)
    return [r for r, _ in prepared]

def counted(run, counters):
    "`run` that keeps the kernel count of its last call in `.kernels` (`counters`: tinybook's or tinygrad's)."
    def f():
        counters.reset(); out = run(); f.kernels = counters.kernel_count
        return out
    return f

def run_case(case:Case, impl:str, make, d:dict, ref:np.ndarray, quick=False, counters=None) -> dict:
    "The row of `impl` alone on `case` (`prepare`, then `timed`): tinygrad's, in its child process."
    return timed(case, [prepare(case, impl, make, d, ref, counters)], quick)[0]
