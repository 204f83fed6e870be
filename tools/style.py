#!/usr/bin/env python3
"""`python tools/style.py [NB...]`: how each chapter measures against STYLE.md's chapter template, one row a notebook: prose as a share
of its characters (target 30-50 %), the median and largest exported cell in lines (target: median <= 5, p90 <= 15), the longest run of
code lines with no prose between (the issue's bound: under 50), exported lines over 120 characters, and whether it ends with exercises
and a link to the next chapter. A report to steer by, not a gate."""
import re, sys, json, statistics
from pathlib import Path

def measure(path:Path) -> dict:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    src = [("".join(c["source"]), c["cell_type"]) for c in cells]
    prose, code = sum(len(s) for s, t in src if t == "markdown"), sum(len(s) for s, t in src if t == "code")
    exported = [s.count("\n") for s, t in src if t == "code" and s.startswith("#| export")]
    run, longest = 0, 0
    for s, t in src:
        run = 0 if t == "markdown" else run + s.count("\n") + 1
        longest = max(longest, run)
    md = "\n".join(s for s, t in src if t == "markdown")
    return {"prose %": round(100 * prose / max(prose + code, 1)), "exported cells": len(exported),
            "median": statistics.median(exported) if exported else 0, "max": max(exported, default=0), "code run": longest,
            "> 120": sum(len(line) > 120 for s, t in src if t == "code" and s.startswith("#| export") for line in s.splitlines()),
            "exercises": bool(re.search(r"\*\*Exercises\*\*|^#+ Exercises|Exercises:", md, re.M)), "next link": bool(re.search(r"^Next: \[", md, re.M))}

if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    paths = [Path(p) for p in sys.argv[1:]] or sorted(p for p in (root / "nbs").glob("[0-9]*.ipynb"))
    rows = {p.stem: measure(p) for p in paths}
    cols = list(next(iter(rows.values())))
    print(f"{'chapter':<14}" + "".join(f"{c:>15}" for c in cols))
    for name, r in rows.items(): print(f"{name:<14}" + "".join(f"{str(r[c]):>15}" for c in cols))
