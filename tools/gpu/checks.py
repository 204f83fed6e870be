"""GPU checks beside the notebooks: `python tools/gpu/checks.py NAME...` runs each named check on `GDEV` (default CUDA).
jit: a TinyJit Adam step bit for bit, copying only the batch and the loss; random_opts: random LOCAL/GROUP/TILE opts
against PYTHON; beam: BEAM=2 on a matmul; variants: matmul kernels by register tile, workgroup and tile, with each
thread mapping; matmul, elementwise: the default kernels against torch on the same GPU (`MM_N`: the sizes)."""
import os, sys, math, time, random, traceback, numpy as np
from tinybook import Tensor, TinyJit, GlobalCounters
from tinybook.tensor import Ops
from tinybook.nn import Linear
from tinybook.nn.optim import Adam
from tinybook.codegen import Kernel, Opt, hand_coded_opts, opt_actions
from tinybook.device import Device, device_empty, _device_mem, beam_on, compiled_kernels, kernel_key, launchable
import tinybook.runtime.cl as cl
DEV, SIZES = os.getenv("GDEV", "CUDA"), [int(n) for n in os.getenv("MM_N", "1024 4096").split()]

def kernel_of(t:Tensor): return [si for si in t.schedule() if si.ast.op is Ops.SINK][-1]
def timed(si, opts:list, reps=20):
    "The best of `reps` runs of `si`'s kernel with `opts` on DEV (inf if its workgroup can't launch), the kernel and its outputs."
    p = Device[DEV].kernel(si.ast, opts)
    if not launchable(p): return math.inf, p, []
    outs, ins = [device_empty(Device[DEV], b) for b in si.bufs[:len(si.ast.src)]], [_device_mem(Device[DEV], b) for b in si.bufs[len(si.ast.src):]]
    p(*[o.mem for o in outs], *ins)
    return min(p(*[o.mem for o in outs], *ins) for _ in range(reps)), p, outs
def torch_time(f, reps=20) -> float:
    import torch
    for _ in range(3): f()
    torch.cuda.synchronize(); evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in evs: s.record(); f(); e.record()
    torch.cuda.synchronize(); return min(s.elapsed_time(e) for s, e in evs) * 1e-3

def jit():
    def mk_mlp():
        Tensor.manual_seed(0); l1, l2 = Linear(16, 32), Linear(32, 4)
        for l in (l1, l2): l.weight, l.bias = l.weight.to(DEV).realize(), l.bias.to(DEV).realize()
        opt = Adam(ps := [l1.weight, l1.bias, l2.weight, l2.bias])
        @Tensor.train()
        def step(x, y): opt.zero_grad(); return l2(l1(x).relu()).sparse_categorical_crossentropy(y).backward().realize(*opt.schedule_step())
        return step, ps
    (plain, p1), (jitted, p2), rng = mk_mlp(), mk_mlp(), np.random.default_rng(0)
    jitted = TinyJit(jitted)
    for i in range(5):
        x, y = rng.random((8, 16), dtype=np.float32), rng.integers(0, 4, 8).astype(np.int32)
        GlobalCounters.reset(); loss = jitted(Tensor(x, device=DEV), Tensor(y, device=DEV)).numpy()
        copies = GlobalCounters.host_to_device, GlobalCounters.device_to_host
        assert i < 2 or copies == (x.nbytes + y.nbytes, 4), copies
        assert loss.tobytes() == plain(Tensor(x, device=DEV), Tensor(y, device=DEV)).numpy().tobytes(), i
        assert all(a.numpy().tobytes() == b.numpy().tobytes() for a, b in zip(p1, p2))
    print(f"JIT on {DEV}: bit for bit, {len(jitted.captured.spec['steps'][0]['calls'])} kernels, copies {copies}")
def random_opts():
    r, rng, n, bad = random.Random(1), np.random.default_rng(0), 0, 0
    wa, wb = rng.standard_normal((64, 32), dtype=np.float32), rng.standard_normal((32, 48), dtype=np.float32)
    cases = [lambda x: x @ Tensor(wb, device=x.device), lambda x: x.sum(1), lambda x: (x * 2).max(0), lambda x: x.reshape(8, 8, 32).sum(2),
             lambda x: x.reshape(1, 2, 32, 32).conv2d(Tensor(wb.reshape(-1)[:54].reshape(3, 2, 3, 3), device=x.device), padding=1)]
    for _ in range(60):
        f = r.choice(cases); t = f(Tensor(wa, device=DEV)); k = Kernel(ast := (si := t.schedule()[-1]).ast)
        for _ in range(r.randint(1, 4)):
            if acts := opt_actions(k, has_local=True): k.apply_opt(r.choice(acts))
        if not launchable(p := Device[DEV].kernel(ast, k.opts)): continue
        compiled_kernels[kernel_key(Device[DEV], ast, si.bufs)] = p; n += 1
        if not np.allclose(t.numpy(), f(Tensor(wa, device="PYTHON")).numpy(), rtol=1e-4, atol=1e-4): bad += 1; print("wrong:", k.opts)
    print(f"random opts on {DEV}: {n} kernels run, {bad} wrong")
def beam():
    si, t0 = kernel_of(Tensor.rand(256, 256, device=DEV).realize() @ Tensor.rand(256, 256, device=DEV).realize()), time.perf_counter()
    opts = beam_on(Device[DEV], si.ast, si.bufs, 2)
    found, default = timed(si, opts)[0], timed(si, Device[DEV].opts(si.ast))[0]
    print(f"BEAM=2 on {DEV} in {time.perf_counter() - t0:.0f} s: {found * 1e6:.1f} us, the default {default * 1e6:.1f} us; {opts}")
def _swapped(lin, group=cl.CL_IDS[0], local=cl.CL_IDS[1], orig=cl.workgroup):
    "05b's `workgroup` with the last of two LOCAL axes on local id 0: neighbouring items on neighbouring columns."
    rs = [u for u in lin if u.op is Ops.RANGE]; l = [r for r in rs if r.arg[0].startswith("lidx")]
    return orig([r for r in rs if r is not l[0]] + l[:1] if len(l) == 2 else rs, group, local)
def variants():
    orig = cl.workgroup
    for N in SIZES:
        a, b = Tensor.rand(N, N, device=DEV).realize(), Tensor.rand(N, N, device=DEV).realize()
        si, ref = kernel_of(a @ b), a.numpy().astype(np.float64) @ b.numpy() if N <= 2048 else None
        for u0, u1, l0, l1, tile in [(4, 4, 8, 8, 0), (4, 4, 8, 8, 8), (4, 4, 8, 8, 16), (4, 4, 16, 16, 0), (4, 4, 16, 16, 16), (8, 4, 8, 8, 16),
                                     (8, 8, 8, 8, 0), (8, 8, 8, 8, 8), (8, 8, 8, 8, 16), (8, 8, 16, 16, 8), (8, 8, 16, 16, 16)]:
            opts = [Opt("UPCAST", 0, u0), Opt("UPCAST", 2, u1), Opt("LOCAL", 2, l1), Opt("LOCAL", 0, l0)] + [Opt("TILE", 6, tile)] * bool(tile)
            for name, wg in (("ids", orig), ("swapped", _swapped)):
                cl.workgroup = wg
                try:
                    tm, p, outs = timed(si, opts)
                    err = np.abs(outs[0].to_host().reshape(N, N) - ref).max() / N if ref is not None and outs else math.nan
                    print(f"{DEV} N={N:5d} up {u0}x{u1} local {l0}x{l1} tile {tile:2d} {name:<8} {tm * 1e3:8.3f} ms "
                          f"{2 * N ** 3 / tm * 1e-9:7.0f} GFLOPS err/N={err:.1e}")
                except Exception as e: print(f"{DEV} N={N} {(u0, u1, l0, l1, tile)} {name} failed: {type(e).__name__}: {str(e)[:200]}")
                finally: cl.workgroup = orig
def matmul():
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    for N in SIZES:
        a, b = Tensor.rand(N, N, device=DEV).realize(), Tensor.rand(N, N, device=DEV).realize()
        si = kernel_of(a @ b)
        for name, opts in (("default", Device[DEV].opts(si.ast)), ("04 rules", hand_coded_opts(Kernel(si.ast)))):
            print(f"{DEV} matmul N={N:5d} {name:<9} {2 * N ** 3 / timed(si, opts)[0] * 1e-9:8.0f} GFLOPS  opts={opts}")
        ta, tb = torch.tensor(a.numpy(), device="cuda"), torch.tensor(b.numpy(), device="cuda")
        print(f"torch matmul N={N:5d} (no TF32) {2 * N ** 3 / torch_time(lambda: ta @ tb) * 1e-9:8.0f} GFLOPS")
def elementwise():
    import torch
    n = 1 << 24
    a, b, c = [Tensor.rand(n, device=DEV).realize() for _ in range(3)]
    si = kernel_of((a * b + c).relu().exp())
    print(f"{DEV} (a*b+c).relu().exp() 16M: {16 * n / timed(si, Device[DEV].opts(si.ast))[0] * 1e-9:.0f} GB/s")
    ta, tb, tc = [torch.rand(n, device="cuda") for _ in range(3)]
    f = torch.compile(lambda a, b, c: (a * b + c).relu().exp())
    print(f"torch.compile the same: {16 * n / torch_time(lambda: f(ta, tb, tc)) * 1e-9:.0f} GB/s")

if __name__ == "__main__":
    for name in sys.argv[1:]:
        t0 = time.perf_counter()
        try: globals()[name]()
        except Exception: traceback.print_exc()
        print(f"--- {name} {time.perf_counter() - t0:.1f} s", flush=True)
