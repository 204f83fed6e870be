"""`python -m bench.serve [--clients 1 4] [--requests 16] [--tokens 64] [--parallel 4] [--json PATH]`: serving speed,
`tinybook llm serve` against llama.cpp's `llama-server` (`LLAMA_SERVER`, else the one `make slow` builds), the same
load on the same GGUF file (bench/llm.py's small-Q8_0) with the same slots and threads, in one run."""
import argparse, json, os, socket, statistics, subprocess, sys, time, concurrent.futures as cf
from pathlib import Path
import httpx
from .llm import gguf_file

ROOT = Path(__file__).parent.parent
LLAMA_SERVER = os.getenv("LLAMA_SERVER") or str(ROOT / ".cache/llama-server/build/bin/llama-server")

def start(cmd:list[str], url:str) -> subprocess.Popen:
    "Run server `cmd` until `url`/health answers 200 (its slots ready), or raise with what it printed."
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    for _ in range(1200):
        if proc.poll() is not None: raise RuntimeError(f"{cmd[0]} exited: {proc.stdout.read()[-500:]}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200: return proc
        except httpx.HTTPError: pass
        time.sleep(0.1)
    proc.kill(); raise TimeoutError(f"{cmd[0]} did not answer /health within 2 minutes")

def load(url:str, prompts:list[str], clients:int, tokens:int) -> dict:
    "Each prompt once, `clients` at a time (a client sends its next when its last is answered): tokens/s, latencies, texts."
    def one(p:str):
        t0 = time.perf_counter()
        r = httpx.post(url + "/v1/completions", timeout=600, json={"prompt": p, "max_tokens": tokens, "temperature": 0,
                                                                      "ignore_eos": True, "cache_prompt": True})
        r.raise_for_status(); j = r.json()
        return time.perf_counter() - t0, j["usage"]["completion_tokens"], j["choices"][0]["text"]
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(clients) as pool: res = list(pool.map(one, prompts))
    wall = time.perf_counter() - t0
    return dict(tps=sum(n for _, n, _ in res) / wall, latency=statistics.mean(s for s, _, _ in res), texts=[t for *_, t in res])

def main():
    ap = argparse.ArgumentParser(prog="python -m bench.serve", description=__doc__.split(":")[0])
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 4]); ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=64); ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--model", default="small-Q8_0"); ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--threads", type=int, help="llama-server's threads (default: the cores this process may use)")
    a = ap.parse_args()
    from tinybook.runtime.cpu import host_cores
    from . import report
    path, threads = str(gguf_file(a.model)), a.threads or host_cores()
    prompts = [f"Request {i}: tell me about the number {i * 7} and what follows it." for i in range(a.requests)]
    with socket.socket() as s: s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    url, ctx = f"http://127.0.0.1:{port}", 1024  # ctx: positions a slot
    servers = {"tinybook": [sys.executable, "-c", "from tinybook.cli import main; main()", "llm", "serve", path, "--q8", "--port", str(port),
                            "--ctx", str(ctx), "--parallel", str(a.parallel)],
               "llama-server": [LLAMA_SERVER, "-m", path, "--port", str(port), "-t", str(threads), "-tb", str(threads),
                                "-np", str(a.parallel), "-c", str(ctx * a.parallel), "--no-webui"]}
    res, notes, start_t = {}, [], report.cpu_times()
    for name, cmd in servers.items():
        if name == "llama-server" and not Path(LLAMA_SERVER).exists():
            notes.append(f"llama-server: not found at {LLAMA_SERVER} (make slow builds it; or set LLAMA_SERVER)"); continue
        print(f"{name}: starting", file=sys.stderr)
        proc = start(cmd, url)
        try:
            for c in a.clients:
                load(url, prompts[:c], c, a.tokens)  # a warm-up: tinybook captures its batch of c here
                res[name, c] = load(url, prompts, c, a.tokens); print(f"{name}, {c} clients: {res[name, c]['tps']:.0f} tokens/s", file=sys.stderr)
        finally: proc.terminate(); proc.wait(30)
    m = report.machine({}, start_t)
    alone = {n: res[n, min(a.clients)]["texts"] for n in servers if (n, min(a.clients)) in res}
    rows = [f"{'clients':>7} {'server':<13} {'tokens/s':>9} {'latency s':>10} {'same as alone':>14} {'tinybook / llama-server':>24}"]
    for c in a.clients:
        for n in servers:
            if (r := res.get((n, c))) is None: continue
            same = sum(t == u for t, u in zip(r["texts"], alone[n]))
            ratio = f"{res['tinybook', c]['tps'] / r['tps']:.2f}x" if n == "llama-server" and ("tinybook", c) in res else ""
            same = f"{same}/{len(r['texts'])}"
            rows.append(f"{c:>7} {n:<13} {r['tps']:>9.1f} {r['latency']:>10.3f} {same:>14} {ratio:>24}")
    out = "\n".join([f"tinybook bench.serve  {m['date']}  tinybook {m['tinybook']}", f"CPU: {m['cpu']}, {m['cores']} cores; {m['vectors']}",
                     f"model: {a.model} ({Path(path).name}), tinybook --q8; {a.parallel} slots of {ctx} positions on each side; "
                     f"llama-server -t {threads}; {m['threads']}",
                     f"load: {a.requests} completions of {a.tokens} tokens at temperature 0, each client sending its next when "
                     "its last is answered; same as alone: texts equal to the run with the fewest clients", "", *rows] +
                    ["", "notes:", *(f"- {n}" for n in notes)] * bool(notes))
    print(out)
    if a.json: Path(a.json).write_text(json.dumps(dict(machine=m, results={f"{n} {c}": {k: v for k, v in r.items() if k != "texts"}
                                                                          for (n, c), r in res.items()}, report=out), indent=1))

if __name__ == "__main__": main()
