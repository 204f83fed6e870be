"The header, the table, the bar chart and the JSON file of a run."
import datetime, json, os, platform, subprocess
from pathlib import Path
from tinybook.helpers import host_lanes
from tinybook.runtime.cpu import host_cores

PEERS = ("tinybook CL", "numpy", "torch", "torch.compile", "tinygrad", "tinygrad.jit")
COLS = "{:<11} {:<19} {:>29} {:<13} {:>14} {:>8}"  # the 29 hold tinybook's time, metric and kernel count
RATIO = "ratio = peer time / tinybook time: >1 means tinybook is faster, <1 the peer is"

def cpu_times() -> tuple[float, float, float]:
    "Wall seconds, busy CPU seconds of the whole machine, and CPU seconds of this process and its finished children."
    j, t = [int(x) for x in open("/proc/stat").readline().split()[1:9]], os.times()
    return t.elapsed, (sum(j) - j[3] - j[4]) / os.sysconf("SC_CLK_TCK"), sum(t[:4])

def machine(info:dict, start:tuple) -> dict:
    "The machine and the run: date, CPU, cores, what others used since `start` (`cpu_times()`), versions, commit."
    cpu = [l.split(":")[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")] or [platform.machine()]
    git = subprocess.run("git rev-parse --short HEAD".split(), cwd=Path(__file__).parent, capture_output=1, text=1)
    (wall, busy, own), n = [e - s for e, s in zip(cpu_times(), start)], os.cpu_count()
    tinybook = f"{git.stdout.strip() or '?'} (DEV={os.getenv('DEV', 'CPU')}, BEAM={os.getenv('BEAM', '0')})"
    flags = next((l for l in open("/proc/cpuinfo") if l.startswith(("flags", "Features"))), "")
    isa = next((name for f, name in ((" avx512f", "AVX-512"), (" avx2", "AVX2"), (" asimd", "NEON")) if f in flags), "no AVX2 or NEON")
    vectors = f"{isa} CPU; tinybook's kernels: {host_lanes()} float lanes, -march={os.getenv('CPU_ARCH', 'native')}" + \
        "".join(f", {k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA") if k in os.environ)
    threads = f"CPU_THREADS={os.environ['CPU_THREADS']} a kernel" if os.getenv("CPU_THREADS") else \
        f"up to {host_cores()} a kernel (the cores this process may use), fewer for small kernels"
    return dict(date=datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), cpu=cpu[0], cores=n, tinybook=tinybook, vectors=vectors, **info,
                threads=f"tinybook {threads}",
                others=100 * (busy - own) / (wall * n),
                unset=os.getenv("BENCH_UNSET", "nothing (neither OPENBLAS_CORETYPE nor OPENBLAS_L2_SIZE was set)"))

def header(m:dict) -> str:
    "The lines above the table, from the machine dict `m`."
    libs = "  ".join(f"{k} {m[k]}" for k in ("numpy", "torch", "tinygrad") if m.get(k))
    return "\n".join([f"tinybook bench  {m['date']}  tinybook {m['tinybook']}",
                      f"CPU: {m['cpu']}, {m['cores']} cores, {m['others']:.0f} % busy with other work during the run",
                      f"vectors: {m['vectors']}", f"threads: {m['threads']} (numpy's BLAS and torch: below)",
                      libs, f"BLAS: {m.get('blas', 'unknown (no threadpoolctl)')}", f"unset: {m['unset']}", RATIO])

def num(v:float) -> str: return f"{v:.0f}" if v >= 100 else f"{v:.3g}"
def secs(s:float) -> str:
    "`s` seconds in s, ms or us, whichever starts at 1 or more."
    return next(f"{num(s * k)} {u}" for k, u in ((1, "s"), (1e3, "ms"), (1e6, "us")) if s * k >= 1 or u == "us")
def _ratio(p:dict, tb:dict) -> float|None:
    "Peer time over tinybook time, None when either has no time."
    return p["median_s"] / tb["median_s"] if "median_s" in tb and "median_s" in p else None

def _tb_cell(tb:dict) -> str:
    "tinybook's time, metric and kernel count; or why it has none."
    if "median_s" not in tb: return tb.get("na") or "FAILED: " + tb["error"].splitlines()[0][:70]
    return f"{secs(tb['median_s']):>8} {num(tb['metric']) + ' ' + tb['unit']:>14} {tb['kernels']:>5}"
def _peer_cells(p:dict, tb:dict) -> tuple[str, str, str]:
    "A peer's name, metric (or why it has none) and ratio."
    r = _ratio(p, tb)
    return p["impl"], f"{num(p['metric'])} {p['unit']}" if "metric" in p else "error", f"{num(r)}x" if r else "-"

def table(cases:list, rows:list[dict]) -> str:
    "A line per case (tinybook's time, metric, kernels) with the first peer beside it, then a line per other peer."
    by = {(r["workload"], r["label"], r["impl"]): r for r in rows}
    out = [COLS.format("workload", "size", "tinybook: time   metric  kern", "peer", "peer", "ratio"), "-" * 99]
    for c in cases:
        tb, lines = by.get((c.workload, c.label, "tinybook"), {"na": "not run"}), []
        if len(cell := _tb_cell(tb)) > 29: lines.append(f"{c.workload:<11} {c.label:<19} {cell}")  # too wide to share
        for p in [by[k] for p in PEERS if (k := (c.workload, c.label, p)) in by]:
            lines.append(COLS.format(*(("", "", "") if lines else (c.workload, c.label, cell)), *_peer_cells(p, tb)))
        out += lines or [COLS.format(c.workload, c.label, cell, "", "", "")]
    return "\n".join(l.rstrip() for l in out)

def problems(rows:list[dict]) -> list[str]:
    "A note for every row that failed, in full."
    return [f"{r['impl']} {r['workload']} {r['label']}: {r['error']}" for r in rows if "error" in r]

def plot(cases:list, rows:list[dict], path:str) -> None:
    "Save the ratios as bars per case and peer (log scale, 1 = parity) to `path`: a 6x3 in, 100 dpi PNG."
    import matplotlib; matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    by = {(r["workload"], r["label"], r["impl"]): r for r in rows}
    fig, ax = plt.subplots(figsize=(6, 3))
    for j, p in enumerate(PEERS):
        pts = [(i, r) for i, c in enumerate(cases) if (k := (c.workload, c.label, p)) in by
               and (r := _ratio(by[k], by.get((c.workload, c.label, "tinybook"), {})))]
        if pts: ax.bar([i + (j - 2) * 0.16 for i, _ in pts], [r for _, r in pts], 0.16, label=p)
    ax.axhline(1, color="k", lw=0.8); ax.set_yscale("log"); ax.set_ylabel("peer time / tinybook time", fontsize=7)
    ax.set_xticks(range(len(cases)), [f"{c.workload} {c.label}" for c in cases], fontsize=5, rotation=40, ha="right")
    ax.tick_params(axis="y", labelsize=6); ax.legend(fontsize=5, ncol=len(PEERS))
    fig.tight_layout(); fig.savefig(path, dpi=100)

def save_json(m:dict, rows:list[dict], notes:list[str], path:str) -> None:
    "Write the machine dict, every row and the notes to `path`."
    Path(path).write_text(json.dumps(dict(machine=m, ratio=RATIO, rows=rows, notes=notes), indent=1))
