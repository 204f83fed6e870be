"tinybook's side: every workload as tinybook code, each call realized so it runs all of its kernels."
from tinybook import Tensor, nn, dtypes
from tinybook.nn.optim import Adam
from .core import chain
from tinybook.jit import TinyJit, Variable

def _mlp(t:dict, jit:bool):
    "One Adam training step of the MLP, starting from the weights in `t` (replayed by TinyJit if `jit`); returns the loss as a Python float."
    layers = [nn.Linear(*t[f"w{i}"].shape[::-1]) for i in (1, 2, 3)]
    for i, l in enumerate(layers, 1): l.weight, l.bias = t[f"w{i}"], t[f"b{i}"]
    opt = Adam([p for l in layers for p in (l.weight, l.bias)])
    def step():
        Tensor.training = True
        opt.zero_grad()
        loss = layers[2](layers[1](layers[0](t["X"]).relu()).relu()).sparse_categorical_crossentropy(t["Y"])
        loss.backward()
        return loss.realize(*opt.schedule_step())  # one schedule: the loss and the update, no second forward
    step = TinyJit(step) if jit else step
    return lambda: step().item()

def _launch(x:Tensor, depth:int, mode:str):
    "The launch-overhead call for `mode`: `chain`, `each` or `jit` (the chain replayed by TinyJit)."
    if mode != "jit": return lambda: chain(x, depth, mode == "each")
    jc = TinyJit(lambda v: chain(v, depth))
    return lambda: jc(x)

def _decode(t:dict, pos:int):
    "The decode step of `bench.core._decode` replayed by TinyJit: caches written in place at a Variable position, attention over its rows 0..pos."
    H, T, hd = t["kc"].shape
    @TinyJit
    def step(x:Tensor, p:Tensor) -> Tensor:
        q, k, v = [(x @ t[w]).reshape(H, 1, hd) for w in ("wq", "wk", "wv")]
        t["kc"][:, p], t["vc"][:, p] = k.reshape(H, hd), v.reshape(H, hd)
        kc, vc = t["kc"][:, :p + 1], t["vc"][:, :p + 1]  # rows 0..pos: a Sym size, read by the kernels when they run
        return (((q @ kc.transpose(1, 2) * hd**-.5).softmax(-1) @ vc).reshape(1, H * hd) @ t["wo"]).realize()
    var = Variable("pos", 0, T - 1)
    return lambda: step(t["x"], var.bind(pos))

def make(case, d:dict, device:str|None=None):
    "A call that runs `case` once in tinybook on the arrays `d` (loaded into fresh tensors on `device`, default `DEV`, here)."
    t, w = {k: Tensor(v.copy(), device=device).realize() for k, v in d.items()}, case.workload
    if w == "matmul": return lambda: (t["a"] @ t["b"]).realize()
    if w == "conv2d": return lambda: t["x"].conv2d(t["w"], padding=1).realize()
    if w == "elementwise": return lambda: (t["a"] * t["b"] + t["c"]).relu().exp().realize()
    if w == "softmax": return lambda: t["x"].softmax(-1).realize()
    if w == "layernorm": return lambda: t["x"].layernorm().realize()
    if w == "mlp": return _mlp(t, case.p["mode"] == "jit")
    if w == "matvec" and case.p["kind"] == "int8 W·x": return lambda: (t["w"].cast(dtypes.int32) * t["x"].cast(dtypes.int32)).sum(1).realize()
    if w == "matvec" and "d" in t: return lambda: ((t["w"].cast(dtypes.int32) * t["x"].cast(dtypes.int32)).sum(-1).float() * (t["d"] * t["dx"])).sum(-1).realize()
    if w == "matvec": return lambda: (t["w"].float() @ t["x"]).realize()
    if w == "decode": return _decode(t, case.p["pos"])
    return _launch(t["x"], case.p["depth"], case.p["mode"])

ON_CL = ("matmul", "mlp")  # the workloads with a `tinybook CL` row: the same code on DEV=CL (PoCL on a CPU, a GPU's driver elsewhere)
def make_cl(case, d:dict): return make(case, d, "CL")
