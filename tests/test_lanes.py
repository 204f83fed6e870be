"""The CPU device at every vector width, whatever this machine's own width is: the conformance suite (test_backends) and
every method (test_devices), with gcc and clang, and for an AVX2 machine's target (x86-64-v3) on x86, each run as
nbdev_test runs a notebook, with CPU_LANES, CPU_ARCH and CC set and TEST_DEVICES=CPU."""
import os, platform, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
AVX2 = {"CPU_ARCH": "x86-64-v3"} if platform.machine() in ("x86_64", "AMD64") else {}  # gcc and clang build vectors of 16 from 8-wide registers
CONFIGS = [{"CPU_LANES": w} for w in ("0", "4", "8", "16")] + [{"CPU_LANES": "8", **AVX2}] * bool(AVX2) + \
          [{"CPU_LANES": w, "CC": "clang", **AVX2} for w in ("4", "16")] * bool(shutil.which("clang"))

def run_nb(nb:str, env:dict) -> tuple[int, str]:
    "Exit status and the end of the output of nbdev_test on notebook `nb` with `env` added."
    r = subprocess.run([str(Path(sys.executable).parent / "nbdev_test"), "--path", f"nbs/{nb}.ipynb"], cwd=ROOT, text=True,
                       capture_output=True, env={**os.environ, "TEST_DEVICES": "CPU", **env})
    return r.returncode, (r.stdout + r.stderr)[-4000:]

@pytest.mark.parametrize("nb", ["test_backends", "test_devices"])
def test_every_lane_width(nb):
    with ThreadPoolExecutor(2) as pool: results = list(pool.map(lambda env: (env, *run_nb(nb, env)), CONFIGS))
    failed = [f"{env}:\n{out}" for env, rc, out in results if rc]
    assert not failed, "\n\n".join(failed)
