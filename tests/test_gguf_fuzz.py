"""Untrusted GGUF files (issue 45): 300 seeded mutants of a tiny Llama, structured (offsets, types, dims, names,
metadata values, counts, alignment, truncation, nesting) and byte flips in the header and the data. Each is classified
by an oracle that does not use tinybook's reader: the `gguf` package's GGUFReader (a file it cannot read is broken)
plus llama.cpp's layout rules (ggml's gguf.cpp) and the model's shape rules, written here. A broken mutant must raise
a GGUFError, a sound one must load and give finite logits. Data flips are not refused: tinybook reads no weight values
at load (llama.cpp neither, without --check-tensors), so a mutant whose weights (as the gguf package dequantizes them)
hold a non-finite value or one over 1e4 in size (an f16 scale flipped to inf, NaN or 65504) is "wild": it may load or
raise a GGUFError and its logits may be anything, but it must not raise anything else. Loading runs in a subprocess
with its address space capped at 8 GiB and a watchdog per mutant, so a hang or a huge allocation fails the test."""
import json, math, os, resource, struct, subprocess, sys, tempfile
import numpy as np

N, SEED, MAX_NEST = 300, 45, 3
SUPPORTED = {0, 1, 30, 24, 25, 26, 27, 28, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14}  # the ggml types tinybook reads
INTS, FLOATS, BOOL, STR, ARR = {0, 1, 2, 3, 4, 5, 10, 11}, {6, 12}, 7, 8, 9

def _meta_rules(f:dict, shapes:dict) -> bool:
    "The model's rules on metadata fields `f` (name -> ReaderField) and tensor `shapes` (name -> (numpy shape, type))."
    v = lambda k: f[k].contents()
    def typed(k, kinds, default=None):  # a scalar of one of the value types `kinds`, else None (absent: `default`)
        if k not in f: return default
        return v(k) if len(f[k].types) == 1 and int(f[k].types[0]) in kinds else None
    def ints(k, default=None):
        x = typed(k, INTS, default)
        return x if x is not None and 0 < x < 2**31 else None
    def pos(k, default=None):
        x = typed(k, INTS | FLOATS, default)
        return x if x is not None and 0 < x < math.inf else None
    arch = typed("general.architecture", {STR})
    if arch not in ("llama", "qwen3", "gemma3"): return False
    g = lambda k: f"{arch}.{k}"
    dim, layers, heads, hidden, ctx = (ints(g(k)) for k in ("embedding_length", "block_count", "attention.head_count",
                                                             "feed_forward_length", "context_length"))
    if None in (dim, layers, heads, hidden, ctx) or None in (pos(g("attention.layer_norm_rms_epsilon")),
                                                             pos(g("rope.freq_base"), 10000.0)): return False
    kv, hd = ints(g("attention.head_count_kv"), heads), ints(g("attention.key_length"), max(dim // heads, 1))
    if kv is None or hd is None or heads % kv or hd % 2: return False
    if arch == "gemma3" and ints(g("attention.sliding_window")) is None:
        return False
    if any(ints(g(k), hd) != hd for k in ("attention.value_length", "rope.dimension_count")): return False
    # the tokenizer
    arr = lambda k, kinds: k in f and int(f[k].types[0]) == ARR and (len(f[k].types) == 1 or
                                                                     int(f[k].types[1]) in kinds)
    if not arr("tokenizer.ggml.tokens", {STR}) or not (n := len(toks := v("tokenizer.ggml.tokens"))): return False
    model = typed("tokenizer.ggml.model", {STR})
    if model not in ("llama", "gpt2") or (model == "llama" and "tokenizer.ggml.scores" not in f): return False
    if model == "gpt2" and "tokenizer.ggml.pre" in f:
        from tinybook.llm.tokenizer import PRE  # the pre-tokenizers tinybook says it supports
        if typed("tokenizer.ggml.pre", {STR}) not in PRE: return False
    for k, kinds in (("token_type", INTS), ("scores", INTS | FLOATS)):
        k = f"tokenizer.ggml.{k}"
        if k in f and not (arr(k, kinds) and len(v(k)) == n):
            return False
    if "tokenizer.ggml.merges" in f and not arr("tokenizer.ggml.merges", {STR}): return False
    for k in ("bos", "eos", "unknown"):
        if f"tokenizer.ggml.{k}_token_id" in f and not 0 <= (typed(f"tokenizer.ggml.{k}_token_id", INTS, -1)) < n:
            return False
    for k in ("add_bos_token", "add_eos_token", "add_space_prefix"):
        if f"tokenizer.ggml.{k}" in f and typed(f"tokenizer.ggml.{k}", {BOOL}) is None: return False
    for k in ("tokenizer.chat_template", "general.architecture"):
        if k in f and typed(k, {STR}) is None: return False
    types = v("tokenizer.ggml.token_type") if "tokenizer.ggml.token_type" in f else []
    if model == "llama" and any(t == 6 and not (len(s) == 6 and s[:3] == "<0x" and s[5] == ">" and
                                               all(c in "0123456789abcdefABCDEF" for c in s[3:5]))
                                for s, t in zip(toks, types)): return False
    # every weight's shape, as the metadata implies it
    q, k_ = heads * hd, kv * hd
    want = {"token_embd": ((n, dim), 1), "output_norm": ((dim,), 1), "output": ((n, dim), 0),
            "rope_freqs": ((hd // 2,), 0)}
    for i in range(layers):
        b = {"attn_norm": (dim,), "attn_q": (q, dim), "attn_k": (k_, dim), "attn_v": (k_, dim), "attn_output": (dim, q),
             "ffn_norm": (dim,), "ffn_gate": (hidden, dim), "ffn_up": (hidden, dim), "ffn_down": (dim, hidden)}
        if arch != "llama": b |= {"attn_q_norm": (hd,), "attn_k_norm": (hd,)}
        if arch == "gemma3": b |= {"post_attention_norm": (dim,), "post_ffw_norm": (dim,)}
        want |= {f"blk.{i}.{k}": (s, 1) for k, s in b.items()}
        if f"blk.{i}.attn_norm.weight" not in shapes: return False  # a missing block: stop before a huge loop
    for name, (shape, need) in want.items():
        if (got := shapes.get(name + ".weight")) is None:
            if need: return False
        elif got[0] != shape or (len(shape) == 1 and got[1] not in (0, 1, 30)): return False
    return True

def oracle(path:str) -> str:
    "'broken', 'sound' or 'wild' (sound, a weight not finite or over 1e4 in size), without tinybook's reader."
    import gguf, gguf.quants
    try:
        with np.errstate(all="ignore"): rd = gguf.GGUFReader(path)
        f = {k: x for k, x in rd.fields.items() if not k.startswith("GGUF.")}
        for x in f.values(): x.contents()  # strings that are not UTF-8 raise here
        data = {t.name: t for t in rd.tensors}
    except Exception: return "broken"
    if rd.fields["GGUF.version"].contents() not in (2, 3) or "" in f or (al := int(rd.alignment)) < 8: return "broken"
    if any(sum(int(t) == ARR for t in x.types) > MAX_NEST for x in f.values()): return "broken"
    size, at, shapes = os.path.getsize(path), 0, {}
    for t in rd.tensors:  # llama.cpp's layout rules
        dims, ty = [int(x) for x in t.field.parts[3]], int(t.tensor_type)
        if len(t.name.encode()) >= 64 or len(dims) > 4 or max(dims, default=0) >= 2**63 or math.prod(dims) >= 2**63 - 1:
            return "broken"
        if ty not in SUPPORTED or (dims or [1])[0] % gguf.GGML_QUANT_SIZES[t.tensor_type][0]: return "broken"
        if int(t.data_offset) - int(rd.data_offset) != at or int(t.data_offset) + int(t.n_bytes) > size: return "broken"
        at += -(-int(t.n_bytes) // al) * al
        shapes[t.name] = (tuple(reversed(dims)), ty)
    if not _meta_rules(f, shapes): return "broken"
    for t in data.values():
        with np.errstate(all="ignore"):  # the package's dequantize has no integer types: their values are the data
            w = t.data.astype(np.float64) if int(t.tensor_type) in (0, 1, 24, 25, 26, 27, 28) else \
                gguf.quants.dequantize(t.data, t.tensor_type)
        if t.name == "rope_freqs.weight" and not (w > 0).all(): return "wild"
        if not np.isfinite(w).all() or np.abs(w).max(initial=0) > 1e4: return "wild"
    return "sound"

def mutants(base:str, rng:np.random.Generator) -> list[tuple[str, bytes]]:
    "`N` mutants of the file at `base`, each a (description, bytes)."
    import gguf
    from tinybook.llm.gguf import gguf_write
    raw, rd = open(base, "rb").read(), gguf.GGUFReader(base)
    meta = {k: x.contents() for k, x in rd.fields.items() if not k.startswith("GGUF.")}
    ts = {t.name: (int(t.tensor_type), tuple(int(x) for x in reversed(t.shape)), t.data.tobytes()) for t in rd.tensors}
    def part(t, i: int) -> int:  # where part `i` of `t`'s entry starts: name length, name, n_dims, dims, type, offset
        return t.field.offset + sum(p.nbytes for p in t.field.parts[:i])
    def patch(at: int, b: bytes) -> bytes: return raw[:at] + b + raw[at + len(b):]
    def rewrite(m=meta, t=ts, align=32) -> bytes:
        with tempfile.NamedTemporaryFile(suffix=".gguf") as tmp:
            gguf_write(tmp.name, m, t, align); return open(tmp.name, "rb").read()
    pick = lambda xs: xs[int(rng.integers(len(xs)))]
    tensors, out = rd.tensors, []
    int_keys = [k for k in meta if k.startswith("llama.") and isinstance(meta[k], int)]
    for i in range(N):
        kind, t = pick(["offset", "type", "dim", "ndims", "rename", "dup", "drop", "int", "float", "tok", "count",
                        "align", "cut", "flip_head", "flip_data", "nested", "version"]), pick(tensors)
        if kind == "offset":
            o = int(t.field.parts[5][0]) + pick([-32, 32, 1, 8, 64])
            o = pick([int(pick(tensors).field.parts[5][0]), o]) % 2**64
            m = patch(part(t, 5), struct.pack("<Q", o)); desc = f"{t.name} offset {o}"
        elif kind == "type":
            ty = pick([0, 1, 2, 3, 4, 8, 12, 14, 16, 24, 26, 30, 99]); m = patch(part(t, 4), struct.pack("<I", ty))
            desc = f"{t.name} type {ty}"
        elif kind == "dim":
            j, d = int(rng.integers(len(t.shape))), int(t.shape[0])
            v = pick([0, 1, d - 1, d + 1, 2 * d, d + 32, 2**32, 2**63, 2**64 - 1]) % 2**64
            m = patch(part(t, 3) + 8 * j, struct.pack("<Q", v)); desc = f"{t.name} dim {j} = {v}"
        elif kind == "ndims":
            nd = pick([0, 1, 3, 5]); m = patch(part(t, 2), struct.pack("<I", nd)); desc = f"{t.name} n_dims {nd}"
        elif kind in ("rename", "dup"):
            same = [u.name for u in tensors if len(u.name) == len(t.name) and u.name != t.name]
            name = pick(same) if kind == "dup" and same else t.name[:-8] + chr(int(rng.integers(97, 123))) + t.name[-7:]
            m = patch(part(t, 1), name.encode()); desc = f"{t.name} renamed {name}"
        elif kind == "drop": m = rewrite(t={k: x for k, x in ts.items() if k != t.name}); desc = f"{t.name} dropped"
        elif kind in ("int", "float"):
            k = pick(int_keys if kind == "int" else ["llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base"])
            v = pick([0, -1, 1, 2, 3, 7, 16, 33, 2**31, 2**32 - 1, 2**63]) if kind == "int" else \
                pick([float("nan"), float("inf"), -1.0, 0.0, 1e-6, 1e30, 1])
            if rng.random() < 0.2: v = pick([(8, "1"), (6, 1.0), (7, True), (9, [1]), (0, 1)])
            elif isinstance(v, int):
                v = (pick([t_ for t_, lo, hi in ((0, 0, 2**8), (5, -2**31, 2**31), (4, 0, 2**32), (10, 0, 2**64),
                                                 (11, -2**63, 2**63)) if lo <= v < hi]), v)
            m = rewrite(meta | {k: v}); desc = f"{k} = {v}"
        elif kind == "tok":
            k, v = pick([("tokenizer.ggml.tokens", list(range(96))), ("tokenizer.ggml.scores", [0.0] * 95),
                         ("tokenizer.ggml.token_type", [1] * 96), ("tokenizer.ggml.token_type", [1] * 90 + [6] * 6),
                         ("tokenizer.ggml.token_type", [1] * 97), ("tokenizer.ggml.eos_token_id", 96),
                         ("tokenizer.ggml.eos_token_id", 5), ("tokenizer.ggml.bos_token_id", (5, -1)),
                         ("tokenizer.ggml.add_bos_token", 1), ("tokenizer.ggml.model", "gpt2"),
                         ("tokenizer.ggml.model", "bert"), ("tokenizer.ggml.tokens", ["a"] * 96),
                         ("general.architecture", "qwen3"), ("general.architecture", 5),
                         ("tokenizer.chat_template", "{{x}}")])
            m = rewrite(meta | {k: v}); desc = f"{k} = {str(v)[:30]}"
        elif kind == "count":
            at, d = pick([8, 16]), pick([-1, 1, 2**40, 2**64 - 1])
            m = patch(at, struct.pack("<Q", (struct.unpack_from("<Q", raw, at)[0] + d) % 2**64))
            desc = f"count at {at} {d:+}"
        elif kind == "align":
            a, w = pick([(4, 8), (4, 16), (4, 64), (4, 24), (4, 0), (4, 1), (4, 4), (5, 32)]), pick([8, 16, 32, 64])
            m = rewrite(meta | {"general.alignment": a}, align=w); desc = f"alignment {a}, written to {w}"
        elif kind == "cut": n = int(rng.integers(len(raw))); m = raw[:n]; desc = f"cut at {n}"
        elif kind in ("flip_head", "flip_data"):
            lo, hi = (0, rd.data_offset) if kind == "flip_head" else (rd.data_offset, len(raw))
            b, ats = bytearray(raw), [int(x) for x in rng.integers(lo, hi, int(rng.integers(1, 5)))]
            for at in ats: b[at] ^= int(rng.integers(1, 256))
            m = bytes(b); desc = f"{kind} at {ats}"
        elif kind == "nested":
            d = int(rng.integers(1, 7)); v = 1
            for _ in range(d): v = [v]
            m = rewrite(meta | {"nest": v}); desc = f"arrays nested {d} deep"
        else: v = pick([1, 2, 4, 2**31]); m = patch(4, struct.pack("<I", v)); desc = f"version {v}"
        out.append((f"{i} {kind}: {desc}", m))
    return out

def worker(d:str) -> None:
    "Load each mutant in `d` as `tinybook llm` does, a JSON line of outcome each; a watchdog ends one that hangs."
    import faulthandler
    from tinybook.llm.gguf import GGUFError
    from tinybook.llm.model import Transformer
    from tinybook.llm.tokenizer import Tokenizer
    for name in sorted(os.listdir(d), key=lambda s: int(s.split(".")[0])):
        faulthandler.dump_traceback_later(20, exit=True)  # a hang ends the process: the test sees a missing outcome
        path = os.path.join(d, name)
        try:
            Tokenizer.from_gguf(path); model = Transformer.from_gguf(path, 16)[0]
            got = "finite" if np.isfinite(model.feed([1, 2, 3][:model.max_ctx], 0).numpy()).all() else "nonfinite"
        except GGUFError: got = "refused"
        except Exception as e: got = f"{type(e).__name__}: {e}"[:300]
        faulthandler.cancel_dump_traceback_later()
        print(json.dumps([name, got]), flush=True)

def _cap() -> None: resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))

def test_gguf_fuzz(tmp_path):
    from tinybook.llm.model import random_llama
    random_llama(base := str(tmp_path / "base.gguf"), dim=32, layers=1, heads=2, kv=1, hidden=64, ctx=64, tied=False)
    assert oracle(base) == "sound"
    os.mkdir(d := tmp_path / "m")
    kinds = {}
    for i, (desc, b) in enumerate(mutants(base, np.random.default_rng(SEED))):
        (d / f"{i}.gguf").write_bytes(b); kinds[f"{i}.gguf"] = (desc, oracle(str(d / f"{i}.gguf")))
    env = {k: v for k, v in os.environ.items() if k != "DEV"}
    r = subprocess.run([sys.executable, __file__, str(d)], capture_output=True, text=True, timeout=240, env=env,
                       preexec_fn=_cap)
    got = dict(json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("["))
    assert len(got) == N, f"{N - len(got)} mutants gave no outcome (a crash or hang):\n{r.stderr[-3000:]}"
    bad = [f"{kinds[n][0]} [{kinds[n][1]}] -> {g}" for n, g in got.items()
           if g != {"broken": "refused", "sound": "finite"}.get(kinds[n][1], g)
           or (kinds[n][1] == "wild" and g not in ("refused", "finite", "nonfinite"))]
    assert not bad, "\n".join(bad)
    counts = {c: sum(k[1] == c for k in kinds.values()) for c in ("broken", "sound", "wild")}
    assert counts["broken"] > N // 2 and counts["sound"] > 10, counts  # both sides of the oracle are exercised

if __name__ == "__main__": worker(sys.argv[1])
