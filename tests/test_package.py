"Checks on the installed package and the repo tools, each in a fresh interpreter."
import re, subprocess, sys
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent

def run(*args: str) -> str:
    "stdout of `python *args` run from the repo root; fails the test on a non-zero exit."
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout

def test_runtime_needs_only_numpy():
    out = run("-c", "import sys, tinybook; print(sorted({m.split('.')[0] for m in sys.modules} & {'fastcore', 'torch', 'nbdev'}))")
    assert out.strip() == "[]", f"import tinybook pulled in dev-only packages: {out}"

def test_tensor_roundtrip():
    out = run("-c", "from tinybook import Tensor, dtypes; print(Tensor([1, 2, 3]).reshape(3, 1).numpy().tolist())")
    assert out.strip() == str(np.array([1, 2, 3]).reshape(3, 1).tolist())

def test_sz_prints_total():
    assert re.search(r"^total\s+\d+$", run("tools/sz.py"), re.M)

def test_readme_has_the_make_test_command():
    cmd = re.search(r"^TEST_CMD := (.+)$", (ROOT / "Makefile").read_text(), re.M)[1]
    assert cmd in (ROOT / "README.md").read_text(), "README.md must show the exact command `make test` runs"

def test_tinygrad_names_at_top_level():
    out = run("-c", "from tinybook import GlobalCounters, Tensor, Device, Context\nGlobalCounters.reset()\n"
                    "with Context(DEV='python:0'): d = Device.DEFAULT\nwith Context(DEV='CPU'): (Tensor([1.0, 2.0]) * 3).numpy()\nprint(GlobalCounters.kernel_count, d)")
    assert out.strip() == "1 PYTHON"
