"""Mutants of a small ONNX model against onnxruntime: where onnxruntime refuses one, tinybook raises OnnxError; where it
runs one, tinybook gives its outputs or raises OnnxError. Never another exception, a hang, or a silent difference."""
import signal
import numpy as np, pytest
onnx = pytest.importorskip("onnx"); ort = pytest.importorskip("onnxruntime")
from onnx import helper, numpy_helper, TensorProto as TP  # noqa: E402
from tinybook.onnx import OnnxRunner, OnnxError  # noqa: E402

N_STRUCT, N_BYTES, SEED = 700, 300, 0
FEEDS = {"x": np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32),
         "k": np.array([3, -7, 5], np.int32)}
OPS = ["Add", "Sub", "Mul", "Div", "Mod", "MatMul", "Relu", "Softmax", "LogSoftmax", "Hardmax", "ArgMax", "Gather",
       "GatherElements", "Reshape", "Transpose", "Expand", "Tile", "Concat", "Identity", "Squeeze", "Unsqueeze",
       "Flatten"]
OPSETS = [0, -1, 7, 11, 13, 17, 21, 28, 29, 10**6]  # none below 7: onnxruntime lacks the oldest versions of some ops
DTYPES = [TP.FLOAT, TP.INT32, TP.INT64, TP.FLOAT16, TP.DOUBLE, TP.BOOL, TP.UINT8, TP.STRING, 999]

def base() -> onnx.ModelProto:
    "y = (Softmax(Gather(x @ w + b, idx, axis=1)) reshaped to (4, 1)) / d; z = (k / dk) mod dk, in integers."
    rng = np.random.default_rng(0)
    inits = {"w": rng.standard_normal((4, 3)).astype(np.float32), "b": rng.standard_normal(3).astype(np.float32),
             "idx": np.array([0, 2], np.int64), "shape": np.array([4, 1], np.int64), "d": np.array([2.0], np.float32),
             "dk": np.array([1, 2, 3], np.int32)}
    nodes = [helper.make_node(op, ins, [out], name=name, **at) for name, op, ins, out, at in (
        ("mm", "MatMul", ["x", "w"], "h1", {}), ("add", "Add", ["h1", "b"], "h2", {}),
        ("gather", "Gather", ["h2", "idx"], "h3", {"axis": 1}), ("softmax", "Softmax", ["h3"], "h4", {"axis": -1}),
        ("reshape", "Reshape", ["h4", "shape"], "h5", {}), ("div", "Div", ["h5", "d"], "y", {}),
        ("idiv", "Div", ["k", "dk"], "q", {}), ("mod", "Mod", ["q", "dk"], "z", {}))]
    ins = [helper.make_tensor_value_info("x", TP.FLOAT, [2, 4]), helper.make_tensor_value_info("k", TP.INT32, [3])]
    # named sizes: a mutant's other shapes are no conflict with the declaration
    outs = [helper.make_tensor_value_info("y", TP.FLOAT, ["m", "n"]), helper.make_tensor_value_info("z", TP.INT32, ["p"])]
    g = helper.make_graph(nodes, "fuzz", ins, outs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

def values(rng, t) -> np.ndarray:
    "New values for initializer `t`, same shape: small ones mostly, now and then zeros or extremes."
    try: a = numpy_helper.to_array(t)
    except Exception: a = np.zeros(3, np.int64)  # an earlier mutation broke it: new int64 values
    if a.dtype.kind == "f":
        return rng.choice([rng.standard_normal(a.shape), np.zeros(a.shape), np.full(a.shape, np.inf)]).astype(a.dtype)
    pick = rng.choice(3, p=[0.8, 0.1, 0.1])
    lo, hi = [(-6, 7), (0, 1), (np.iinfo(a.dtype).min, np.iinfo(a.dtype).max)][pick]
    return rng.integers(lo, hi, a.shape, dtype=a.dtype, endpoint=pick == 2)

def mutate(rng, m:onnx.ModelProto) -> str:
    "Apply one structured mutation to `m` in place; what it did, to name the mutant."
    kinds = {"axis": .15, "values": .3, "dims": .05, "input": .1, "op": .1, "opset": .1, "dtype": .05, "attr": .15}
    g, kind = m.graph, rng.choice(list(kinds), p=list(kinds.values()))
    n = g.node[rng.integers(len(g.node))]; t = g.initializer[rng.integers(len(g.initializer))]
    if kind == "axis":
        n = g.node[int(rng.choice([2, 3]))] if rng.random() < 0.8 else n  # Gather's or Softmax's, or any node's
        ax = int(rng.choice([-9, -3, -2, -1, 0, 1, 2, 3, 9]))
        n.ClearField("attribute"); n.attribute.append(helper.make_attribute("axis", ax)); return f"{n.name}.axis={ax}"
    if kind == "values":
        v = values(rng, t); t.CopyFrom(numpy_helper.from_array(v, t.name)); return f"{t.name}={v.tolist()}"
    if kind == "dims":
        dims = [int(d) for d in rng.choice([0, 1, 2, 3, 4, 6, 12, 2**40], rng.integers(0, 4))]
        t.dims[:] = dims; return f"{t.name}.dims={dims}"
    if kind == "input":
        names = ["x", "k", *[i.name for i in g.initializer], *[o for v in g.node for o in v.output], "nowhere"]
        j = int(rng.integers(len(n.input))); new = str(rng.choice(names)); n.input[j] = new
        return f"{n.name}.input[{j}]={new}"
    if kind == "op": n.op_type = str(rng.choice(OPS)); return f"{n.name}.op={n.op_type}"
    if kind == "opset": m.opset_import[0].version = v = int(rng.choice(OPSETS)); return f"opset={v}"
    if kind == "dtype":
        d = int(rng.choice(DTYPES))
        if rng.random() < 0.5: t.data_type = d; return f"{t.name}.data_type={d}"
        vi = g.input[rng.integers(len(g.input))]; vi.type.tensor_type.elem_type = d
        return f"input {vi.name}.elem_type={d}"
    at = rng.choice(["keepdims", "fmod", "batch_dims", "allowzero", "perm"])
    val = [1, 0] if at == "perm" else int(rng.integers(-1, 3))
    n.attribute.append(helper.make_attribute(str(at), val)); return f"{n.name}.{at}={val}"

def int_divisor_computed(m:onnx.ModelProto) -> bool:
    ("A Div or Mod whose divisor is computed by another node: onnxruntime divides integers with the CPU's instruction, "
     "so a computed zero would kill the process (SIGFPE); such mutants are skipped.")
    given = {"x", "k", *[t.name for t in m.graph.initializer]}
    return any(n.op_type in ("Div", "Mod") and len(n.input) > 1 and n.input[1] not in given for n in m.graph.node)

def mutants():
    "(name, serialized model) pairs: N_STRUCT of one or two structured mutations, N_BYTES of byte-level ones."
    rng, out, src = np.random.default_rng(SEED), [], base().SerializeToString()
    while len(out) < N_STRUCT:
        m = base(); what = "; ".join(mutate(rng, m) for _ in range(rng.integers(1, 3)))
        if not int_divisor_computed(m): out.append((f"struct {len(out)}: {what}", m.SerializeToString()))
    while len(out) < N_STRUCT + N_BYTES:
        b, k = bytearray(src), int(rng.integers(4))
        pos = sorted(int(p) for p in rng.integers(len(b), size=rng.integers(1, 4)))
        if k == 0: what = f"bytes {pos} -> random"; b[pos[0]:pos[0] + 1] = b""; b[pos[-1]:pos[-1]] = rng.bytes(1)
        elif k == 1: what = f"truncated at {pos[0]}"; b = b[:pos[0]]
        else:
            what = f"byte xor at {pos}"
            for p in pos: b[p] ^= int(rng.integers(1, 256))
        try: m = onnx.load_from_string(bytes(b))
        except Exception: m = None
        if m is None or not int_divisor_computed(m): out.append((f"bytes {len(out)}: {what}", bytes(b)))
    return out

def run_ort(b:bytes):
    "onnxruntime's outputs, or None where it refuses the model (made or run)."
    so = ort.SessionOptions(); so.intra_op_num_threads = so.inter_op_num_threads = 1; so.log_severity_level = 4
    try: return ort.InferenceSession(b, so, providers=["CPUExecutionProvider"]).run(None, FEEDS)
    except Exception: return None

def hang(*args): raise TimeoutError("over 10 s")

def test_fuzz(monkeypatch, capsys):
    "Each mutant: onnxruntime's refusal is tinybook's OnnxError; onnxruntime's outputs are tinybook's, or an OnnxError."
    monkeypatch.setenv("DEV", "PYTHON")  # 03's interpreter: tiny graphs without a compiler
    old = signal.signal(signal.SIGALRM, hang)
    counts, bad, refused = {"both run": 0, "both refuse": 0, "tinybook refuses, onnxruntime runs": 0}, [], []
    for name, b in mutants():
        want = run_ort(b)
        signal.alarm(10)
        try: got = [t.numpy() for t in OnnxRunner(b)(FEEDS).values()]
        except OnnxError: got = None
        except Exception as e:  # a hang is a TimeoutError
            bad.append(f"{name}: {type(e).__name__}: {str(e)[:200]}"); continue
        finally: signal.alarm(0)
        if got is None:
            counts["both refuse" if want is None else "tinybook refuses, onnxruntime runs"] += 1
            refused += [name] * (want is not None)
        elif want is None: bad.append(f"{name}: silent success, onnxruntime refuses")
        elif len(got) != len(want) or any(g.shape != w.shape or g.dtype != w.dtype or
                                          not np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
                                          for g, w in zip(got, want)):
            bad.append(f"{name}: differs: {[(g.shape, g.dtype) for g in got]} vs {[(w.shape, w.dtype) for w in want]}")
        else: counts["both run"] += 1
    signal.signal(signal.SIGALRM, old)
    with capsys.disabled():
        print(f"\nonnx fuzz, {N_STRUCT + N_BYTES} mutants: {counts}, {len(bad)} failures; tinybook refuses {refused}")
    assert bad == [], "\n".join(bad[:30])
    # a runner refusing everything would pass the loop: most of what onnxruntime runs must run here too
    assert counts["both run"] >= 100 and counts["tinybook refuses, onnxruntime runs"] <= counts["both run"] // 20, counts
