"""`python tools/gpu/run_nb.py NB [--flags "cuda bench"]`: a notebook's code cells in one namespace, as nbdev_test runs them, without nbdev.
Every cell runs even after a failure; prints each cell's time and any traceback; exit code = number of failed cells."""
import json, sys, time, traceback, configparser, os, __future__
nb, on = sys.argv[1], set(sys.argv[sys.argv.index("--flags") + 1].split()) if "--flags" in sys.argv else set()
cfg = configparser.ConfigParser(); cfg.read("settings.ini")
skip = set(cfg["DEFAULT"]["tst_flags"].split()) - on
ns, bad = {"__name__": "__main__"}, 0
os.chdir("nbs")
for i, c in enumerate(json.load(open(os.path.basename(nb)))["cells"]):
    src = "".join(c["source"])
    if c["cell_type"] != "code" or "nbdev_export(" in src: continue
    first = src.split("\n", 1)[0].strip()
    if first.startswith("#|") and (first[2:].strip() in skip or first[2:].replace(" ", "").startswith("eval:false")): continue
    src = "\n".join(l for l in src.split("\n") if not l.lstrip().startswith(("%", "!")))
    t0 = time.perf_counter()
    try: exec(compile(src, f"{nb}[cell {i}]", "exec", __future__.annotations.compiler_flag), ns); status = "ok"  # future flags as IPython keeps them
    except BaseException: bad += 1; status = "FAILED\n" + traceback.format_exc(); print(src[:600])
    print(f"=== {nb} cell {i} ({first[:40]}) {time.perf_counter() - t0:.1f}s {status}", flush=True)
print(f"=== {nb}: {bad} failed cells")
sys.exit(min(bad, 100))
