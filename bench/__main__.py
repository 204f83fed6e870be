"`python -m bench [workloads...] [--threads N] [--quick] [--plot PATH] [--json PATH]`: time tinybook against its peers."
import os, sys
UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")  # both slow OpenBLAS down; it reads them once, when numpy loads it
AVX2 = {"CPU_LANES": "8", "CPU_ARCH": "x86-64-v3", "OPENBLAS_CORETYPE": "Haswell",  # --avx2: tinybook, numpy, torch's own kernels, MKL, oneDNN
        "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}
want = AVX2 if "--avx2" in sys.argv else {}
drop = [k for k in UNSET if k in os.environ and k not in want]
if drop or any(os.environ.get(k) != v for k, v in want.items()):  # the libraries read these when they load: set them, then start again
    env = {k: v for k, v in os.environ.items() if k not in drop} | want | ({"BENCH_UNSET": " ".join(f"{k}={os.environ[k]}" for k in drop)} if drop else {})
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)

import argparse
from tinybook.device import GlobalCounters
from . import peers, report, tb
from .core import WORKLOADS, cases, inputs, prepare, reference, timed

def args():
    "The command line: workloads (default all), --quick, --plot PATH, --json PATH."
    ap = argparse.ArgumentParser(prog="python -m bench", description="Time tinybook against numpy, torch and tinygrad.")
    ap.add_argument("workloads", nargs="*", metavar="workload", help=f"any of {', '.join(WORKLOADS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="small sizes, 2 timed runs, no torch.compile: the smoke test")
    ap.add_argument("--plot", metavar="PATH", help="save a bar chart of the ratios (PNG)")
    ap.add_argument("--json", metavar="PATH", help="write the raw results")
    ap.add_argument("--threads", type=int, metavar="N", help="N threads for tinybook (CPU_THREADS) and every peer "
                    "(default: each its own, every core the process may use)")
    ap.add_argument("--avx2", action="store_true", help="AVX2 code only, on an AVX-512 machine too: tinybook, OpenBLAS, torch (tinygrad stays native)")
    a = ap.parse_args()
    if bad := set(a.workloads) - set(WORKLOADS): ap.error(f"unknown workload {' '.join(bad)}; pick from {WORKLOADS}")
    if a.threads is not None and a.threads < 1: ap.error(f"--threads {a.threads}: expected 1 or more")
    a.workloads = [w for w in WORKLOADS if w in (a.workloads or WORKLOADS)]
    return a

def main():
    a, start = args(), report.cpu_times()
    if a.threads: os.environ["CPU_THREADS"] = str(a.threads)  # read when a kernel compiles
    inproc, notes, info = peers.load(a.quick, a.threads)
    cs, rows = cases(a.workloads, a.quick), []
    for c in cs:  # every side of a case timed in turns (`timed`)
        d = inputs(c); ref = reference(c, d)
        ready = [prepare(c, "tinybook", tb.make, d, ref, GlobalCounters)]
        if c.workload in tb.ON_CL: ready.append(prepare(c, "tinybook CL", tb.make_cl, d, ref))
        for name, (make, on) in inproc.items():  # the TinyJit launch row is tinybook against tinygrad.jit alone
            if c.workload in on and (c.workload, c.p.get("mode")) != ("launch", "jit"): ready.append(prepare(c, name, make, d, ref))
        rows += timed(c, ready, a.quick)
    tg, tg_notes, info["tinygrad"] = peers.tinygrad_rows(a.workloads, a.quick, a.threads)
    rows, m = rows + tg, report.machine(info, start)
    notes += tg_notes + report.problems(rows)
    mv = {r["label"].split(" ", 1)[1]: r["median_s"] for r in rows if r["workload"] == "matvec" and r["impl"] == "tinybook" and "median_s" in r}
    if len(mv) == 5: notes.append(f"matvec: against tinybook's fp32 weights, its fp16 weights run {mv['fp32 W'] / mv['fp16 W']:.2f}x as fast, "
                                  f"int8 weights {mv['fp32 W'] / mv['int8 W']:.2f}x, "
                                  f"int8 weights and activations (an int8 dot, summed in int32) {mv['fp32 W'] / mv['int8 W·x']:.2f}x, "
                                  f"both in Q8_0 blocks with scales (one kernel: a reduce inside a reduce) {mv['fp32 W'] / mv['Q8_0 W·x']:.2f}x")
    if m["others"] > 10: notes.append(f"other processes took {m['others']:.0f} % of the CPU: rerun on a quiet machine")
    print(report.header(m), "", report.table(cs, rows), sep="\n")
    if notes: print("\nnotes:", *(f"- {n}" for n in notes), sep="\n")
    if a.plot: report.plot(cs, rows, a.plot)
    if a.json: report.save_json(m, rows, notes, a.json)

if __name__ == "__main__": main()
