"The tinygrad Tensor API a tinygrad user's code reaches for: each name with tinygrad's parameters, and each refusal with the type tinygrad's tests expect."
import inspect
import numpy as np, pytest
import tinygrad
from tinybook import Tensor, dtypes

NAMES = """clone view roll unfold repeat_interleave meshgrid masked_fill masked_select nonzero isclose isfinite fmod log10 sinh cosh
asinh acosh atanh logaddexp logsigmoid logcumsumexp cumprod cummax cummin std_mean normalize softmin softsign selu swish quick_gelu
hardsigmoid hardtanh nll_loss max_unpool2d kaiming_uniform kaiming_normal glorot_uniform scaled_uniform gelu max_pool2d isinf
lshift rshift bitwise_not erf pad sort argsort topk multinomial scatter scatter_reduce interpolate""".split()

# tinygrad 0.14's public Tensor names that tinybook leaves out on purpose, each with why
LEFT_OUT = {
    "shard": "multi-device: a tinybook tensor lives on one device", "shard_": "multi-device, in place",
    "shard_like": "multi-device, like another tensor",
    "decode_hevc_frame": "a hardware video decoder (tinygrad's NV HEVC engine)",
    "image_conv2d": "conv2d rewritten for Adreno texture (IMAGE) buffers; tinybook's backends have none, conv2d is the value",
    "image_dot": "dot through image_conv2d, for the same IMAGE buffers",
    "call": "applies one of tinygrad's CALL UOp functions; tinybook's graph has no CALL op",
    "callify": "turns tinygrad's pending graph into CALL UOps",
    "custom_kernel": "a kernel written in tinygrad's UOps; tinybook's kernels come from its own codegen (04)",
    "linear_with_vars": "tinygrad's LINEAR schedule UOp and its variables; tinybook's schedule (03) is its own",
    "schedule_linear": "tinygrad's LINEAR schedule UOp",
    "as_param": "a PARAM slot of tinygrad's function capture; tinybook's TinyJit (08) has no parameter slots",
    "is_param": "marks a PARAM of tinygrad's function capture", "is_param_": "sets is_param",
}

def test_every_tinygrad_name():
    "Every public name of tinygrad's Tensor is tinybook's (on the class or on an instance), or left out with a reason."
    theirs, t = {n for n in dir(tinygrad.Tensor) if not n.startswith("_")}, Tensor([1.0])
    ours = {n for n in theirs if hasattr(Tensor, n) or hasattr(t, n)}
    assert not (missing := sorted(theirs - ours - LEFT_OUT.keys())), f"tinygrad's Tensor has {missing}, tinybook's lacks them"
    assert not (stale := sorted(LEFT_OUT.keys() - (theirs - ours))), f"LEFT_OUT names {stale}, which tinybook has or tinygrad lacks"

def params(f) -> list:
    "Each parameter's name, default and kind (a `**kwargs` by kind only: its name is nobody's business)."
    return [(p.name if p.kind is not p.VAR_KEYWORD else "**", p.default, p.kind) for p in inspect.signature(f).parameters.values()]

@pytest.mark.parametrize("name", NAMES)
def test_signature(name):
    assert params(getattr(Tensor, name)) == params(getattr(tinygrad.Tensor, name)), name

def test_ndim_and_dtype_limits():
    assert Tensor.ones(2, 3, 1).ndim == tinygrad.Tensor.ones(2, 3, 1).ndim == 3
    for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"):
        ours, theirs = getattr(dtypes, name), getattr(tinygrad.dtypes, name)
        assert (ours.min, ours.max) == (dtypes.min(ours), dtypes.max(ours)) == (theirs.min, theirs.max), name

R, V, I = RuntimeError, ValueError, IndexError
REFUSALS = [  # (call with T the Tensor class, the types test/test_ops.py in tinygrad expects)
    (lambda T: T.empty(-3, 2), V), (lambda T: T.rand((2, -3)), V), (lambda T: T.zeros((2, -3, 0)), V), (lambda T: T.randn(-3, 2), V),
    (lambda T: T.randint(-3, 2), V), (lambda T: T.scaled_uniform(-3, 2), V), (lambda T: T.glorot_uniform(-3, 2), V), (lambda T: T.full((2, -3), 4), V),
    (lambda T: T.eye(-3, 3), V), (lambda T: T.kaiming_uniform((-3, 3), 3), V), (lambda T: T.kaiming_normal(-3, 3), V),
    (lambda T: T.ones(8).unfold(0, 9, 3), R), (lambda T: T.ones(8).unfold(1, 8, 3), I), (lambda T: T.ones(8).unfold(0, 1, -1), R),
    (lambda T: T([0., 1., 2.]).meshgrid(indexing="bad"), R), (lambda T: T.linspace(5, 10, 3, dtype="bool"), (R, V)), (lambda T: T.linspace(1, 2, -1), (R, V)),
    (lambda T: T([5]).div(T([0]), rounding_mode="typo"), R), (lambda T: T([-2, 0, 2]) ** -2, R),
    (lambda T: T.ones(4).bitwise_xor(T.ones(4)), R), (lambda T: T.ones(4).bitwise_and(T.ones(4)), R), (lambda T: T.ones(4).bitwise_or(T.ones(4)), R),
    (lambda T: T.ones(4).bitwise_not(), R),
    *[(lambda T, op=op, a=a, s=s: getattr(T.ones(*s), op)(axis=a), I) for op in ("cumsum", "cumprod", "cummax") for s, a in (((), 1), ((20,), 1), ((20,), -2))],
    (lambda T: T.einsum("...ik..., ...jk ->", T.ones(2, 3, 4), T.ones(2, 3, 4)), (R, I)), (lambda T: T.einsum("i...j,ji...->...", T.ones(2, 3, 4), T.ones(2, 3, 4)), R),
    (lambda T: T.einsum("pqrs,tuqvr->pstuv", T.ones(3, 8, 10, 5), T.ones(11, 5, 13, 16, 8)), R),
    (lambda T: T.einsum("ij,jk->ij", T.ones(10, 15), T.ones(15, 20), T.ones(20, 10)), (V, R)), (lambda T: T.einsum("ij,jk->ij", T.ones(10, 10)), (V, R)),
    (lambda T: T.ones(4).dot(T.ones(1, 2)), R), (lambda T: T.ones(2, 1).dot(T.ones(4)), R), (lambda T: T.ones(2, 4).dot(T.ones(1, 3)), R),
    (lambda T: T(3.14).matmul(T(3.14)), R), (lambda T: T(3.14) @ T.ones(3, 3), R),
    (lambda T: T([1.0, 2.0]).sum(dtype=""), AttributeError), (lambda T: T([1.0, 2.0]).prod(dtype=""), AttributeError), (lambda T: T.ones(3, 4, 5, 6).sum(5), I), (lambda T: T(1.5).sum(1), I), (lambda T: T(1.5).sum((1,)), I),
    (lambda T: T(3.14)[0], I), (lambda T: T.ones(4, 3)[1, 77, 77, 77], I), (lambda T: T.ones(4, 3)[1, 3], I), (lambda T: T.ones(4, 3)[1, -4], I),
    (lambda T: T.ones(4, 3)[..., ...], I), (lambda T: T.ones(4, 3)[::0, 1], V), (lambda T: T.ones(4, 3)[:T([3]), 1], TypeError), (lambda T: T(2)[:], I),
    (lambda T: T.ones(3, 3).pad((2, 0, 2)), (R, V)), (lambda T: T.ones(3, 3).pad((0, 0, 0, 0, 1, 0, 3, 0)), (R, V)),
    (lambda T: T.ones(3, 3, 3).pad((3, 0), mode="typo"), NotImplementedError), (lambda T: T.ones(3, 3).pad((None, (0, 1), (3, 0))), V),
    (lambda T: T.ones(3, 3).pad(((0, 1),)), V),
    (lambda T: T.ones(3, 4, 5, 6).permute((0, 2)), R), (lambda T: T.ones(3, 4, 5, 6).permute((0, 1, 2, 3, 3, 3)), R), (lambda T: T.ones(3, 4, 5, 6).permute((0, 0, 1, 2, 3)), R),
    (lambda T: T.ones(3, 4).reshape((-1, -1, 2)), R), (lambda T: T.ones((4, 3, 6, 6)).reshape([]), V),
    (lambda T: T.ones(3, 4).flip((0, 0)), R), (lambda T: T.ones(3, 4).flip((1, -1)), R),
    (lambda T: T.ones(4, 3, 6, 6).squeeze(50), I), (lambda T: T(1.5).squeeze(10), I), (lambda T: T(1.5).squeeze(-2), I),
    (lambda T: T.ones(2, 4).roll((1, 2)), R), (lambda T: T.ones(3, 3).roll(shifts=1, dims=(0, 1)), R), (lambda T: T.ones(10).roll(shifts=(1, 2), dims=0), R),
    (lambda T: T.ones(4, 3, 1, 6).expand(4, 1, 1, 6), (V, R)), (lambda T: T.ones(4, 3, 1, 6).expand(3, 1, 6), (V, R)), (lambda T: T.ones(4, 3, 2, 6).expand(4, 3, 0, 6), (V, R)),
    (lambda T: T.ones(2, 16, 2, 2).conv_transpose2d(T.ones(32, 16, 3, 3), padding=(1, 1, 1)), (R, V)),
    (lambda T: T.ones(1, 1, 6, 7).conv2d(T.ones(6, 1, 3, 3), dilation=3), (R, AssertionError)), (lambda T: T.ones(2, 16, 2, 2).conv2d(T.ones(32, 16, 3, 3)), (R, AssertionError)),
    (lambda T: T.ones(2, 16, 2, 2).conv2d(T.ones(32, 16, 3, 3), padding=(1, 1, 1)), (R, V)),
    (lambda T: T.ones(4, 2, 11, 28).max_pool2d(kernel_size=(2, 2), padding=(1, 1, 1)), (R, V)), (lambda T: T.ones(4, 2, 11, 28).avg_pool2d(kernel_size=(2, 2), padding=(1, 1, 1)), V),
    (lambda T: T(3.14).cat(T(3.14)), I), (lambda T: T.stack(T.ones(45, 65, 3), dim=77), I), (lambda T: T.stack((T([1, 2]), T([3, 4])), T([5, 6])), V),
    (lambda T: T.ones(4, 6, 3).repeat((2, 4)), V), (lambda T: T.ones(4, 5).clip(None, None), R),
    (lambda T: T.ones(10, 11, 12)[T(1.1)], I), (lambda T: T.ones(10, 11, 12)[[1.1]], I), (lambda T: T.ones(10, 11, 12)[T([True, False])], I),
    (lambda T: T.ones(10, 11, 12)[[True, False]], I),
    (lambda T: T.ones(4, 5, 6).gather(dim=0, index=T([1], dtype=T([1]).dtype)), (R, AssertionError)),
    (lambda T: T.ones(2, 8, 4, 8).scaled_dot_product_attention(T.ones(2, 8, 4, 8), T.ones(2, 8, 4, 8), is_causal=True, attn_mask=T.ones(2, 8, 4, 4)), R),
    (lambda T: T.ones(32, 10).cross_entropy(T.ones(32, 1)), (AssertionError, R)), (lambda T: T.ones(32, 10).cross_entropy(T.ones(32, 10), reduction="typo"), V),
    (lambda T: T.ones(32, 10).nll_loss(T([1] * 32), reduction="typo"), V), (lambda T: T.ones(4).masked_select(T([1, 0, 1, 0])), R),
    # in-place operators assign: the result keeps the dtype and broadcasts to the shape; a comparison has no gradient
    (lambda T: T([1, 2]).__itruediv__(2), R), (lambda T: T([1, 2]).__iadd__(1.5), R),
    (lambda T: T([1.0, 2.0]).__iadd__(T([[1.0], [2.0]])), V), (lambda T: (T([1.0, 2.0]) < 1).sum().gradient(T([1.0])), R),
]

@pytest.mark.parametrize("k", range(len(REFUSALS)))
def test_refusal_types(k):
    call, expected = REFUSALS[k]
    for T in (tinygrad.Tensor, Tensor):  # tinygrad first: the expectation is tinygrad's, not only ours
        with pytest.raises(expected): getattr(r := call(T), "realize", lambda: r)()  # tinygrad checks some dtypes when it compiles

@pytest.mark.parametrize("args", [(5,), (5.0,), (0, 5, 0.5), (1, 4.0), (0, -3, -1), (True,)])
def test_arange_dtype(args):
    "arange's dtype from its arguments is tinygrad's: its default int (int32; torch's would be int64) or float."
    ours, theirs = Tensor.arange(*args).numpy(), tinygrad.Tensor.arange(*args).numpy()
    assert (ours.dtype, ours.tolist()) == (theirs.dtype, theirs.tolist())

def test_uint64_bits():
    "`&`, `|`, `^` on uint64 values past 2**63 (tensor and Python-int operands), as numpy."
    a, b = np.array([2**63 + 5, 2**64 - 1, 7], np.uint64), np.array([2**63 + 3, 2**63, 2**64 - 2], np.uint64)
    for op in ("__and__", "__or__", "__xor__"):
        assert getattr(Tensor(a), op)(Tensor(b)).numpy().tolist() == getattr(a, op)(b).tolist(), op
        assert getattr(Tensor(a), op)(2**63 + 3).numpy().tolist() == getattr(a, op)(np.uint64(2**63 + 3)).tolist(), op

INPLACE = [("+", [1., 2.], 1), ("-", [1., 2.], [3., 4.]), ("*", [1., 2.], 2.5), ("/", [1., 2.], 4), ("//", [5, -7], 2),
           ("**", [1., 2.], 2), ("&", [5, 6], 3), ("|", [5, 6], 3), ("^", [5, 6], 3), ("<<", [5, 6], 2), (">>", [5, 6], 1),
           ("@", [[1., 2.], [3., 4.]], [[1., 0.], [1., 1.]]), ("%", [5, 6], 4), ("/", [1, 2], 2), ("+", [1, 2], 1.5),
           ("@", [[1., 2., 3.]], [[1.], [1.], [1.]]), ("+", [1., 2.], [[1.], [2.]])]

def inplace(T, op, x, y):
    "`t op= y` with T the Tensor class: what another reference to `t` then holds, or the exception's type."
    t = T(x); ref = t
    try: exec(f"t {op}= y", {}, {"t": t, "y": T(y) if isinstance(y, list) else y})
    except Exception as e: return type(e)
    return ref.numpy().tolist()

@pytest.mark.parametrize("k", range(len(INPLACE)))
def test_inplace(k):
    "In-place operators assign, as tinygrad's: another reference sees the new value (`%=` rebinds); the same refusals."
    assert inplace(Tensor, *INPLACE[k]) == inplace(tinygrad.Tensor, *INPLACE[k])

@pytest.mark.parametrize("ix", [[(0, 1), (2, 0)], [[0, 1], [2, 0]], [(0, 1)], [0, 1], [(0, 1), slice(1, 3)]])
def test_list_index(ix):
    "A list holding more than ints is a tuple, one index per axis, as tinygrad reads it: reading and writing."
    for real in (False, True):  # a realized tensor is written in place (03)
        ours, theirs = Tensor.arange(12).reshape(3, 4), tinygrad.Tensor.arange(12).reshape(3, 4)
        assert ours[ix].numpy().tolist() == theirs[ix].numpy().tolist()
        if real: ours.realize()
        ours[ix] = -1; theirs[ix] = -1
        assert ours.numpy().tolist() == theirs.numpy().tolist()
