"The benchmark's smoke test: `python -m bench --quick` on a few workloads, with whichever peers are installed."
import json, os, re, subprocess, sys
from importlib.util import find_spec
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

def test_quick_bench_prints_rows_and_ratios(tmp_path):
    env = {**os.environ, "OPENBLAS_CORETYPE": "Haswell"}  # the runner must drop it before numpy loads
    cmd = [sys.executable, "-m", "bench", "--quick", "matmul", "elementwise", "launch", "matvec", "decode", "--json", tmp_path / "r.json"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    out, res = r.stdout, json.loads((tmp_path / "r.json").read_text())
    assert "unset: OPENBLAS_CORETYPE=Haswell" in out and "BLAS: " in out and "ratio = peer time / tinybook time" in out
    for w, label in [("matmul", "N=64"), ("elementwise", "1M fp32"), ("launch", "32 deps, 1 realize")]:
        assert re.search(rf"^{w}\s+{label}\s+\d", out, re.M), f"no tinybook numbers for {w} {label}:\n{out}"
    tb = {r["label"]: r for r in res["rows"] if r["impl"] == "tinybook"}
    assert [tb[k]["kernels"] for k in ("N=64", "1M fp32", "32 deps, 1 realize", "32 realizes")] == [1, 1, 32, 32]
    assert "median_s" in tb["32 deps, TinyJit"] and tb["32 deps, TinyJit"]["kernels"] == 32  # the replay counts its kernels too
    assert tb["pos 7 of 64"]["kernels"] == tb["pos 63 of 64"]["kernels"]  # a decode step's kernels do not grow with the position
    assert "matvec: against tinybook's fp32 weights, its fp16 weights run" in out
    numpy_rows = re.findall(r"\bnumpy\s+\S+ (?:GFLOPS|GB/s)\s+([\d.]+)x$", out, re.M)
    assert len(numpy_rows) == 7, f"numpy's matmul, elementwise and 5 matvec rows need a ratio:\n{out}"  # numpy is always there
    assert not any(r["impl"] == "torch.compile" for r in res["rows"]) and not any("error" in r for r in res["rows"])

def test_quick_bench_on_avx2_code(tmp_path):
    if not re.search(r"\bavx2\b", Path("/proc/cpuinfo").read_text()): pytest.skip("an AVX2 target needs an x86 CPU with AVX2")
    r = subprocess.run([sys.executable, "-m", "bench", "--quick", "--avx2", "matmul"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tinybook's kernels: 8 float lanes, -march=x86-64-v3, OPENBLAS_CORETYPE=Haswell, ATEN_CPU_CAPABILITY=avx2, MKL_ENABLE_INSTRUCTIONS=AVX2, ONEDNN_MAX_CPU_ISA=AVX2" in r.stdout, r.stdout
    assert re.search(r"^matmul\s+N=64\s+\d", r.stdout, re.M), r.stdout

def test_quick_llm_bench(tmp_path):
    "`python -m bench.llm --quick`: a tiny random Llama written by the bench, tinybook's tokens/s and kernels, and each peer's or why it has none."
    cmd = [sys.executable, "-m", "bench.llm", "--quick", "--json", tmp_path / "r.json"]
    r = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "BENCH_MODELS": str(tmp_path)}, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / "r.json").read_text())
    notes = "\n".join(res["notes"])
    for tb in (res["results"]["tiny-Q8_0"]["tinybook"], res["results"]["tiny-Q8_0"]["tinybook q8"]):  # exact, and with int8 dot products
        assert len(tb["tg"]) == len(tb["pp"]) == 1 and min(tb["tg"] + tb["pp"]) > 0 and tb["kernels"] > 0
    assert (tmp_path / "tiny-Q8_0.gguf").exists()
    assert re.search(r"^tiny-Q8_0\s+tg8\s+[\d.]+ ±", r.stdout, re.M) and re.search(r"^tiny-Q8_0\s+pp16\s+[\d.]+ ±", r.stdout, re.M), r.stdout
    for peer, module in (("llama.cpp", "llama_cpp"), ("tinygrad", "tinygrad")):
        if find_spec(module): assert peer in res["results"]["tiny-Q8_0"], notes  # installed: it ran, with a ratio in the table
        else: assert f"{peer} on tiny-Q8_0: " in notes
