"`nbdev_skips`: the notebook cells nbdev_test skips (tools/book.py shows them without running them); `slow` tests run only when `-m slow` asks."
import re
from configparser import ConfigParser
from pathlib import Path
import pytest

cfg = ConfigParser(delimiters=["="])
cfg.read(Path(__file__).parent / "settings.ini", encoding="utf-8")
TST_FLAGS = set(cfg["DEFAULT"]["tst_flags"].split())

def nbdev_skips(src: str) -> bool:
    "Does nbdev_test skip a cell with source `src`? (a `#|` line at its top names a `tst_flags` flag or `eval: false`; or it calls nbdev_export)"
    for line in src.lstrip().splitlines():
        if not (m := re.match(r"#\s*\|\s*(\S+)\s*(\S*)", line)): break
        if m[1] in TST_FLAGS or (m[1] == "eval:" and m[2].lower() == "false"): return True
    return "nbdev_export(" in src

def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a dev test that needs llama-cpp-python and the real model; `make slow` runs it")

def pytest_collection_modifyitems(config, items):
    slow = "slow" in (config.getoption("markexpr") or "")
    for item in items:
        if item.get_closest_marker("slow") and not slow: item.add_marker(pytest.mark.skip(reason="a slow dev test: `make slow` runs it"))
