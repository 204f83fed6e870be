"""The CPU device at every vector width, whatever this machine's own width is: the conformance suite (test_backends) and
every method (test_devices), each run as nbdev_test runs a notebook with TEST_DEVICES=CPU, under four settings that
between them take every width (CPU_LANES 0, 4, 8, 16), gcc and clang (CC), an AVX2 machine's target on x86 (CPU_ARCH
x86-64-v3: vectors of 16 built from 8-wide registers), kernels split between two threads and kept on one
(CPU_THREADS) and cache blocks from a tiny and a huge L2 (CPU_L2, KiB): no result may depend on this machine's width,
compiler, cores or caches. The machine's own setting is the test run's pass of the notebooks (tests/test_book.py). The
conformance suite skips the first setting (no lanes: the scalar C every kernel without a vector axis uses anyway, and
test_devices' every method runs there): it is the test run's largest part, and CI has 20 minutes."""
import os, platform, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
AVX2 = {"CPU_ARCH": "x86-64-v3"} if platform.machine() in ("x86_64", "AMD64") else {}
CLANG = {"CC": "clang"} if shutil.which("clang") else {}
CONFIGS = [{"CPU_LANES": "0", "CPU_THREADS": "2", "CPU_L2": "64"},
           {"CPU_LANES": "4", "CPU_THREADS": "1", "CPU_L2": "65536"},
           {"CPU_LANES": "8", **AVX2, "CPU_THREADS": "2", "CPU_L2": "65536"},
           {"CPU_LANES": "16", **CLANG, **AVX2, "CPU_THREADS": "1", "CPU_L2": "64"}]

def run_nb(nb:str, env:dict) -> tuple[int, str]:
    "Exit status and the end of the output of nbdev_test on notebook `nb` with `env` added."
    base = {k: v for k, v in os.environ.items() if k != "DEV"}  # importing tinygrad (tests/test_api.py) sets DEV
    r = subprocess.run([str(Path(sys.executable).parent / "nbdev_test"), "--path", f"nbs/{nb}.ipynb"], cwd=ROOT, text=True,
                       capture_output=True, env={**base, "TEST_DEVICES": "CPU", **env})
    return r.returncode, (r.stdout + r.stderr)[-4000:]

@pytest.mark.parametrize("nb, configs", [("test_backends", CONFIGS[1:]), ("test_devices", CONFIGS)])
def test_every_lane_width(nb, configs):
    with ThreadPoolExecutor(2) as pool: results = list(pool.map(lambda env: (env, *run_nb(nb, env)), configs))
    failed = [f"{env}:\n{out}" for env, rc, out in results if rc]
    assert not failed, "\n\n".join(failed)
