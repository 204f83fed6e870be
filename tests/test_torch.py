"""Many ops in one process, forward and backward, against torch on every device here, with every buffer the allocator
hands out filled with 0xFF bytes (FILL_NAN=1): a kernel that leaves part of its output unwritten fails here, where a
fresh process's zeroed memory would hide it (issue 20/27: a padded constant, a slice's gradient, `eye`)."""
import numpy as np, pytest, torch
import torch.nn.functional as F
from tinybook import Tensor
from tinybook.cli import check_device

def tpad(x, p):  # tinybook's pad takes (before, after) per axis from the first; torch's from the last axis, flat
    return x.pad(p) if isinstance(x, Tensor) else F.pad(x, [n for ba in reversed(p) for n in ba])
def cat(xs, dim):
    return Tensor.cat(*xs, dim=dim) if isinstance(xs[0], Tensor) else torch.cat(xs, dim)
def eye_like(x, n):
    return Tensor.eye(n, device=x.device) if isinstance(x, Tensor) else torch.eye(n)
def ones_like(x):
    return Tensor.ones(*x.shape, device=x.device) if isinstance(x, Tensor) else torch.ones(x.shape)

# (name, input shape, fn): fn takes a tinybook Tensor or a torch tensor and gives a float result of any shape
CASES = [
    ("pad constant", (2,), lambda x: tpad(ones_like(x), ((0, 1),)) * tpad(x, ((1, 0),))),
    ("pad input", (2,), lambda x: tpad(x, ((0, 1),))),
    ("slice sum", (3,), lambda x: x[0:2]),
    ("pad 2d", (2, 3), lambda x: tpad(x, ((1, 1), (0, 2)))),
    ("slice 2d", (4, 5), lambda x: x[1:3, 2:]),
    ("slice step", (4, 6), lambda x: x[::2, 1::3]),
    ("index", (3, 4), lambda x: x[1]),
    ("expand", (3, 1), lambda x: x.expand(3, 4)),
    ("expand sum", (1, 4), lambda x: x.expand(5, 4).sum(0)),
    ("softmax", (3, 5), lambda x: x.softmax(-1)),
    ("log_softmax", (3, 5), lambda x: x.log_softmax(0)),
    ("eye mul", (3, 3), lambda x: x * eye_like(x, 3)),
    ("sum over empty", (3, 0), lambda x: x.sum(1)),
    ("sum", (4, 5), lambda x: x.sum(0)),
    ("max", (4, 5), lambda x: x.max(1)[0] if isinstance(x, torch.Tensor) else x.max(1)),
    ("mean", (4, 5), lambda x: x.mean()),
    ("cumsum", (6,), lambda x: x.cumsum(0)),
    ("matmul", (4, 5), lambda x: x @ x.T),
    ("relu exp", (3, 4), lambda x: (x * 2 - 0.5).relu().exp()),
    ("sigmoid tanh", (3, 4), lambda x: x.sigmoid() * x.tanh()),
    ("flip", (3, 4), lambda x: x.flip(1)),
    ("permute reshape", (2, 3, 4), lambda x: x.permute(2, 0, 1).reshape(4, 6)),
    ("cat", (2, 3), lambda x: cat([x, x * 2, x[:1]], 0)),
    ("pad then slice", (3, 3), lambda x: tpad(x, ((2, 2), (2, 2)))[1:6, 0:4]),
    ("where", (3, 4), lambda x: (x > 0.5).float() * x + x.sqrt()),
]

def run(fn, x:np.ndarray, w:np.ndarray|None, device:str|None):
    ("Forward value and input gradient of `fn` at `x`, with loss sum(fn(x) * w) (`w` None: sum(fn(x)), a gradient of "
     "constants): tinybook on `device`, or torch (None).")
    if device is None:
        t = torch.tensor(x, requires_grad=True); y = fn(t); (y if w is None else y * torch.tensor(w)).sum().backward()
        return y.detach().numpy(), t.grad.numpy()
    t = Tensor(x, device=device, requires_grad=True); y = fn(t)
    (y if w is None else y * Tensor(w, device=device)).sum().backward()
    return y.numpy(), t.grad.numpy()

DEVICES = ["CPU", "PYTHON", "CL", "WEBGPU"]

@pytest.fixture(autouse=True)
def nan_fill(monkeypatch): monkeypatch.setenv("FILL_NAN", "1")

@pytest.mark.parametrize("device", DEVICES)
def test_ops_against_torch(device):
    if not check_device(device).startswith("works"): pytest.skip(check_device(device))
    rng, bad = np.random.default_rng(0), []
    for _ in range(2):  # a second round runs on memory the first left behind
        for name, shape, fn in CASES:
            x = rng.uniform(0.1, 1.0, shape).astype(np.float32)  # away from 0: no kinks (relu, sqrt) at the samples
            for w in (None, rng.standard_normal(np.shape(fn(torch.tensor(x)))).astype(np.float32)):
                want, got = run(fn, x, w, None), run(fn, x, w, device)
                for part, g, t in zip(("forward", "backward" + " weighted" * (w is not None)), got, want):
                    if g.shape != t.shape or not np.allclose(g, t, rtol=1e-4, atol=1e-5):
                        bad.append(f"{name} {part}: {g} != {t}")
    assert not bad, f"{device}: " + "\n".join(bad)

@pytest.mark.parametrize("device", DEVICES + ["DSP", "QCOM"])
def test_issue_reproductions(device, monkeypatch):
    "The issue's two reproductions and `eye`, after other work, on every device here (the DSP under qemu, the Adreno mocked)."
    monkeypatch.setenv("QCOM_MOCK", "1")
    if not check_device(device).startswith("works"): pytest.skip(check_device(device))
    (Tensor.rand(16, 16, device=device) @ Tensor.rand(16, 16, device=device)).numpy()  # earlier work
    np.testing.assert_array_equal(Tensor.ones(2, device=device).pad(((0, 1),)).numpy(), [1, 1, 0])
    x = Tensor([1., 2., 3.], device=device, requires_grad=True); x[0:2].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 0])
    np.testing.assert_array_equal(Tensor.eye(3, device=device).numpy(), np.eye(3))
