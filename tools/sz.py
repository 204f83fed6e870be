#!/usr/bin/env python3
"Count the lines of code in tinybook/: lines holding tokens, docstrings and comments excluded (idea from tinygrad's sz.py)."
import os, sys, tokenize
from pathlib import Path

CODE = {tokenize.OP, tokenize.NAME, tokenize.NUMBER, tokenize.STRING}

def is_docstring(prev, tok, nxt) -> bool:
    "Is the STRING token `tok` (between tokens `prev` and `nxt`) a statement of its own: a docstring or a bare string?"
    starts = prev.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING) or \
        (prev.string == ":" and prev.line.lstrip().startswith(("def ", "class ", "async def ")))  # one-line `def f(): "doc"`
    return starts and (nxt.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or nxt.string == ";")

def count(path:Path) -> tuple[int, int]:
    "(lines, tokens) of code in the file at `path`."
    with open(path, "rb") as f: toks = [t for t in tokenize.tokenize(f.readline) if t.type not in (tokenize.NL, tokenize.COMMENT)]
    code = [t for i, t in enumerate(toks) if t.type in CODE and not (t.type == tokenize.STRING and is_docstring(toks[i-1], t, toks[i+1]))]
    return len({t.start[0] for t in code}), len(code)

if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    rows = sorted(((p.relative_to(root).as_posix(), *count(p)) for p in (root / "tinybook").rglob("*.py") if p.name != "_modidx.py"),
                  key=lambda r: -r[1])
    print(f"{'file':40} {'lines':>7} {'tokens/line':>12}")
    for name, lines, toks in rows: print(f"{name:40} {lines:7d} {toks / max(lines, 1):12.1f}")
    total = sum(r[1] for r in rows)
    print(f"{'total':40} {total:7d}")
    if (cap := os.getenv("MAX_LINE_COUNT")) and total > int(cap): sys.exit(f"line count {total} exceeds MAX_LINE_COUNT={cap}")
