"""The slow course test (`make slow`): each chapter's learner's copy, with the book's code pasted into its exercises, run top to bottom
in a kernel of its own as a learner runs it; every exercise's line must say ok. (11_course runs 01_ops's copy, with stubs and with
answers, on every test run; `planted` there checks every chapter's checks without a kernel.)"""
import json
import pytest
from tinybook import course

pytestmark = pytest.mark.slow

@pytest.mark.parametrize("chapter", course.chapters())
def test_copy_runs(chapter, tmp_path):
    import nbformat
    from nbclient import NotebookClient
    p = course.start(chapter, tmp_path); nb = json.loads(p.read_text())
    for ex in course.exercises(chapter):
        cell = next(c for c in nb["cells"] if c["metadata"].get("tinybook") == ex.name)
        cell["source"] = ex.code + f"{ex.name} = mine({ex.name})\n"
    p.write_text(json.dumps(nb))
    nb = nbformat.read(p, as_version=4)
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    said = ["".join(o.get("text", "") for o in c.outputs).strip() for c in nb.cells if c.metadata.get("tinybook")]
    assert len(said) == len(course.exercises(chapter)) and all(s.startswith("ok: ") for s in said), said
