"""Fetch llama.cpp's tokenizer test vocabularies (ggml-vocab-*.gguf with their .inp/.out vectors) into a folder, once.

They ship only inside the llama-cpp-python source distribution on PyPI (76 MB); `make test` runs this, and 09a's
tests read the folder (TINYBOOK_VOCAB, default .cache/llama-vocab). Usage: python tools/vocab.py [DIR]"""
import subprocess, sys, tarfile, tempfile
from pathlib import Path

SDIST = "llama-cpp-python==0.3.36"

def fetch(out:Path) -> None:
    if (out / ".done").exists(): return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", SDIST, "-d", tmp], check=True)
        with tarfile.open(next(Path(tmp).glob("*.tar.gz"))) as tf:
            members = [m for m in tf.getmembers() if m.isfile() and "/vendor/llama.cpp/models/ggml-vocab-" in m.name]
            out.mkdir(parents=True, exist_ok=True)
            for m in members: (out / Path(m.name).name).write_bytes(tf.extractfile(m).read())
    (out / ".done").write_text(f"{SDIST}: {len(members)} files\n")
    print(f"tools/vocab.py: {len(members)} vocabulary files from {SDIST} in {out}")

if __name__ == "__main__": fetch(Path(sys.argv[1] if len(sys.argv) > 1 else ".cache/llama-vocab"))
