"tinygrad's side, run by `bench.peers` in a child with DEV=CPU (tinybook reads DEV too): one JSON row per line."
import json, sys
from tinygrad import Context, Device, GlobalCounters, Tensor, TinyJit, nn
from .core import cases, chain, inputs, reference, run_case

def _mlp(t:dict):
    "The Adam training step of the MLP from the weights in `t`, as a function of (X, Y) that TinyJit can capture."
    layers = [nn.Linear(*t[f"w{i}"].shape[::-1]) for i in (1, 2, 3)]
    for i, l in enumerate(layers, 1): l.weight, l.bias = t[f"w{i}"], t[f"b{i}"]
    opt = nn.optim.Adam([p for l in layers for p in (l.weight, l.bias)], lr=1e-3)
    def step(X, Y):
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = layers[2](layers[1](layers[0](X).relu()).relu()).sparse_categorical_crossentropy(Y)
            loss.backward()
            return loss.realize(*opt.schedule_step())  # in one go: realized after opt.step() it reads the new weights
    return step

def make(case, d:dict, jit=False):
    "A synchronized call that runs `case` once in tinygrad on the arrays `d`, replayed by TinyJit when `jit`."
    t, w = {k: Tensor(v.copy()).realize() for k, v in d.items()}, case.workload
    if w == "matmul": f, args = (lambda a, b: (a @ b).realize()), (t["a"], t["b"])
    if w == "elementwise": f, args = (lambda a, b, c: (a * b + c).relu().exp().realize()), (t["a"], t["b"], t["c"])
    if w == "mlp": f, args = _mlp(t), (t["X"], t["Y"])
    if w == "launch": f, args = (lambda x: chain(x, case.p["depth"], case.p["mode"] == "each")), (t["x"],)
    f = TinyJit(f) if jit else f
    def run():
        out = f(*args); Device[Device.DEFAULT].synchronize()
        return out.item() if w == "mlp" else out
    return run

if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for case in cases([a for a in sys.argv[1:] if a != "--quick"], quick):
        d = inputs(case); ref = reference(case, d)
        for jit in [case.p["mode"] == "jit"] if case.workload in ("launch", "mlp") else [False, True]:
            impl = "tinygrad.jit" if jit else "tinygrad"
            row = run_case(case, impl, lambda c, d: make(c, d, jit), d, ref, quick, GlobalCounters)
            print(json.dumps(row), flush=True)
