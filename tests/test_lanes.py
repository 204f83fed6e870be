"""The CPU device at every vector width, whatever this machine's own width is: the conformance suite (test_backends) and
every method (test_devices), with gcc and clang, and for an AVX2 machine's target (x86-64-v3) on x86, each run as
nbdev_test runs a notebook, with CPU_LANES, CPU_ARCH and CC set and TEST_DEVICES=CPU; over the settings, kernels split
between two threads or kept on one (CPU_THREADS) and cache blocks from a tiny and a huge L2 (CPU_L2), so no result
depends on this machine's width, cores or caches. The setting the test run's own pass of the notebooks uses (this
machine's width, its default compiler and target) is left to that pass (tests/test_book.py)."""
import os, platform, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest
from tinybook.device import host_lanes

ROOT = Path(__file__).resolve().parent.parent
AVX2 = {"CPU_ARCH": "x86-64-v3"} if platform.machine() in ("x86_64", "AMD64") else {}  # gcc and clang build vectors of 16 from 8-wide registers
# the host's own width, compiler and target: what the notebooks' own run uses (no CPU_LANES set)
CONFIGS = [{"CPU_LANES": w} for w in ("0", "4", "8", "16") if w != str(host_lanes())] + [{"CPU_LANES": "8", **AVX2}] * bool(AVX2) + \
          [{"CPU_LANES": w, "CC": "clang", **AVX2} for w in ("4", "16")] * bool(shutil.which("clang"))
# threads and cache sizes (KiB) the host would not pick, in turn: two threads, one, a tiny L2, a huge one
CONFIGS = [{**c, "CPU_THREADS": "21"[i % 2], "CPU_L2": ("64", "65536")[i // 2 % 2]} for i, c in enumerate(CONFIGS)]

def run_nb(nb:str, env:dict) -> tuple[int, str]:
    "Exit status and the end of the output of nbdev_test on notebook `nb` with `env` added."
    r = subprocess.run([str(Path(sys.executable).parent / "nbdev_test"), "--path", f"nbs/{nb}.ipynb"], cwd=ROOT, text=True,
                       capture_output=True, env={**{k: v for k, v in os.environ.items() if k != "DEV"}, "TEST_DEVICES": "CPU", **env})  # tinygrad sets DEV
    return r.returncode, (r.stdout + r.stderr)[-4000:]

@pytest.mark.parametrize("nb", ["test_backends", "test_devices"])
def test_every_lane_width(nb):
    with ThreadPoolExecutor(2) as pool: results = list(pool.map(lambda env: (env, *run_nb(nb, env)), CONFIGS))
    failed = [f"{env}:\n{out}" for env, rc, out in results if rc]
    assert not failed, "\n\n".join(failed)
