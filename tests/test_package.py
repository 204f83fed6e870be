"Checks on the installed package, its wheel, the README's examples and the repo tools, each in a fresh interpreter."
import os, re, shutil, subprocess, sys
from configparser import ConfigParser
from pathlib import Path
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent

def run(*args: str) -> str:
    "stdout of `python *args` run from the repo root; fails the test on a non-zero exit."
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout

def sh(*args, cwd: Path, env: dict | None = None) -> str:
    "stdout of the command `args` run in `cwd`; a non-zero exit fails the test with the command's stderr."
    p = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr[-3000:]}"
    return p.stdout

def readme_examples() -> list[tuple[str, str]]:
    "(code, shown output) for each ```python block of README.md: the output is the plain ``` block that follows, if any."
    blocks = re.findall(r"^```(\w*)\n(.*?)^```$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M | re.S)
    return [(code, blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else "")
            for i, (lang, code) in enumerate(blocks) if lang == "python"]

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
                    "with Context(DEV='python:0'): d = Device.DEFAULT\n"
                    "with Context(DEV='CPU'): (Tensor([1.0, 2.0]) * 3).numpy()\nprint(GlobalCounters.kernel_count, d)")
    assert out.strip() == "1 PYTHON"

def test_readme_has_examples():
    assert readme_examples(), "README.md has no ```python block"

@pytest.mark.parametrize("code,shown", readme_examples(), ids=[f"example{i}" for i in range(len(readme_examples()))])
def test_readme_example_prints_what_it_shows(code, shown):
    assert run("-c", code) == shown

def dist_name() -> str:
    cfg = ConfigParser(delimiters=["="]); cfg.read(ROOT / "settings.ini", encoding="utf-8")
    return cfg["DEFAULT"]["lib_name"]

def test_distribution_name():
    "PyPI's `tinybook` is another project: ours is `lib_name` (imported as `tinybook`), and every line a user copies says so."
    name = dist_name()
    assert name != "tinybook" and re.search(rf'^name="{name}"$', (ROOT / "pyproject.toml").read_text(), re.M)  # nbdev_export rewrites it
    install = re.search(r"^## Install\n\n```sh\n(.*?)^```$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M | re.S)[1]
    assert re.search(r"^pip install \.(\s|$)", install, re.M) and not re.search(r"pip install '?tinybook\b(?!-)", install)
    files = [ROOT / "README.md", ROOT / "bench" / "README.md", *ROOT.glob("nbs/*.ipynb"), *ROOT.glob("tinybook/**/*.py")]
    wrong = [f.relative_to(ROOT) for f in files if f.exists() and "pip install 'tinybook[" in f.read_text(encoding="utf-8")]
    assert not wrong, f"extras named after the import name, not the distribution {name!r}: {wrong}"

def test_wheel_in_a_fresh_venv(tmp_path):
    "Build the sdist and from it the wheel (as the release workflow does), install the wheel alone in a new venv and run the README there."
    src = tmp_path / "src"; src.mkdir()
    for f in ("setup.py", "settings.ini", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE"): shutil.copy(ROOT / f, src)
    shutil.copytree(ROOT / "tinybook", src / "tinybook", ignore=shutil.ignore_patterns("__pycache__"))  # a copy: no build/ in the clone
    for p in [*ROOT.glob("nbs/*.ipynb"), *ROOT.glob("nbs/results/*.json")]:  # the notebooks: 11's course copies them
        (src / p.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True); shutil.copy(p, src / p.relative_to(ROOT))
    sh(sys.executable, "-m", "build", "--no-isolation", "--outdir", "dist", "src", cwd=tmp_path)
    whl, = (tmp_path / "dist").glob(f"{dist_name().replace('-', '_')}-*-py3-none-any.whl")
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DEV")}  # DEV: tinygrad's import sets it
    sh(venv / "bin" / "python", "-m", "pip", "install", "-q", whl, cwd=tmp_path, env=env)  # numpy from pip's cache or the index
    py = lambda code: sh(venv / "bin" / "python", "-c", code, cwd=tmp_path, env=env)  # run outside the clone: the wheel, not the source
    assert py("import tinybook; print(tinybook.__file__)").startswith(str(venv))
    code, shown = readme_examples()[0]
    assert py(code) == shown
    assert re.search(r"\bCPU\b.*\bworks\b", sh(venv / "bin" / "tinybook", "devices", cwd=tmp_path, env=env))
    sh(venv / "bin" / "tinybook", "course", "start", "01_ops", cwd=tmp_path, env=env)  # the course from the wheel's notebooks
    assert "01_ops: 0 of 3 exercises pass" in sh(venv / "bin" / "tinybook", "course", "check", "01_ops", cwd=tmp_path, env=env)
    assert re.search(r"^01_ops +0/3  \.\.\.$", sh(venv / "bin" / "tinybook", "course", "progress", cwd=tmp_path, env=env), re.M)
