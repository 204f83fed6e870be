#!/usr/bin/env python3
"""Count the lines of code in tinybook/: lines holding tokens, docstrings and comments excluded (tinygrad's sz.py idea).
Each chapter's intro says "exports about N lines"; the count of its module must be within 10 % of N (or 10 lines)."""
import os, re, sys, json, tokenize
from pathlib import Path

CODE = {tokenize.OP, tokenize.NAME, tokenize.NUMBER, tokenize.STRING}

def is_docstring(prev, tok, nxt) -> bool:
    "Is the STRING token `tok` (between tokens `prev` and `nxt`) a statement of its own: a docstring or a bare string?"
    starts = prev.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING) or \
        (prev.string == ":" and prev.line.lstrip().startswith(("def ", "class ", "async def ")))  # `def f(): "doc"`
    return starts and (nxt.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or nxt.string == ";")

def count(path:Path) -> tuple[int, int]:
    "(lines, tokens) of code in the file at `path`."
    with open(path, "rb") as f: toks = list(tokenize.tokenize(f.readline))
    toks = [t for t in toks if t.type not in (tokenize.NL, tokenize.COMMENT)]
    doc = lambda i, t: t.type == tokenize.STRING and is_docstring(toks[i-1], t, toks[i+1])
    code = [t for i, t in enumerate(toks) if t.type in CODE and not doc(i, t)]
    return len({t.start[0] for t in code}), len(code)

def stated(nb:Path) -> tuple[str, int|None]:
    "(module path, the N of \"exports about N lines\" in the markdown or None) of the chapter notebook `nb`."
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    mod = next(m[1] for c in cells if (m := re.match(r"#\| default_exp (\S+)", "".join(c["source"]))))
    md = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    n = re.search(r"exports about (\d+) lines", re.sub(r"\s+", " ", md))
    return mod.replace(".__init__", "").replace(".", "/"), n and int(n[1])

def stale(root:Path, counts:dict) -> list[str]:
    "Chapters whose stated line count is missing or off by more than 10 % (or 10 lines) from `counts` of their module."
    bad = []
    for nb in sorted((root / "nbs").glob("[0-9]*.ipynb")):
        mod, n = stated(nb)
        have = counts.get(f"tinybook/{mod}.py", counts.get(f"tinybook/{mod}/__init__.py"))
        if n is None: bad.append(f"{nb.name}: no \"exports about N lines\" (its module counts {have})")
        elif abs(n - have) > max(10, have // 10): bad.append(f"{nb.name}: says about {n} lines, its module has {have}")
    return bad

if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    files = [p for p in (root / "tinybook").rglob("*.py") if p.name != "_modidx.py"]
    rows = sorted(((p.relative_to(root).as_posix(), *count(p)) for p in files), key=lambda r: -r[1])
    print(f"{'file':40} {'lines':>7} {'tokens/line':>12}")
    for name, lines, toks in rows: print(f"{name:40} {lines:7d} {toks / max(lines, 1):12.1f}")
    total = sum(r[1] for r in rows)
    print(f"{'total':40} {total:7d}")
    if bad := stale(root, {name: lines for name, lines, _ in rows}): print("\n".join(bad))
    if (cap := os.getenv("MAX_LINE_COUNT")) and total > int(cap): sys.exit(f"line count {total} exceeds {cap=}")
    if bad: sys.exit("each chapter states its module's line count (\"exports about N lines\"): update the intros above")
