"onnx's own backend test suite against tinybook.onnx: the light_* real models (10_onnx runs the node tests), and the CLI on bad files."
import os, subprocess, sys, unittest
import pytest
onnx = pytest.importorskip("onnx"); pytest.importorskip("onnxruntime")
from tinybook.onnx import Backend  # noqa: E402

def test_real_models():
    "Seven light_* models (AlexNet, ResNet50, Inception v1/v2, DenseNet121, VGG19, ZFNet512) on the CPU; 10_onnx runs the other two."
    import onnx.backend.test
    bt = onnx.backend.test.BackendTest(Backend, __name__).include(r"_cpu$").exclude(r"(squeezenet|shufflenet)")
    suite = unittest.TestLoader().loadTestsFromTestCase(bt.test_cases["OnnxBackendRealModelTest"])
    res = unittest.TestResult(); suite.run(res)
    assert (res.testsRun - len(res.skipped), [(t.id(), e[-500:]) for t, e in res.failures + res.errors]) == (7, [])

def test_cli_bad_files(tmp_path):
    ("`tinybook onnx run` on a file that is not protobuf, an invalid model, a `..` external-data location, a "
     "missing file and a junk program: one line on stderr, exit status 1.")
    from onnx import helper
    for f in ("junk.onnx", "junk.npz"): (tmp_path / f).write_bytes(b"not a protobuf \xff\xfe")
    vi = lambda n: helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [4])
    add = lambda b, inits=(): helper.make_model(helper.make_graph([helper.make_node("Add", ["x", b], ["y"])], "g",
                                                                   [vi("x")], [vi("y")], list(inits)))
    (tmp_path / "invalid.onnx").write_bytes(add("nowhere").SerializeToString())
    w = onnx.TensorProto(name="w", data_type=1, dims=[4], data_location=onnx.TensorProto.EXTERNAL)
    w.external_data.add(key="location", value="../secret.bin")
    (tmp_path / "secret.bin").write_bytes(bytes(16)); (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "out.onnx").write_bytes(add("w", [w]).SerializeToString())
    env = {k: v for k, v in os.environ.items() if k != "DEV"}
    for name, want in (("junk.onnx", "cannot load the model: DecodeError"), ("invalid.onnx", "invalid ONNX model"),
                       ("sub/out.onnx", "points outside the directory"), ("none.onnx", "No such file"),
                       ("junk.npz", "pickled")):  # a compiled program numpy cannot read
        cmd = [sys.executable, "-c", "from tinybook.cli import main; main()", "onnx", "run", str(tmp_path / name)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert (r.returncode, r.stdout, len(r.stderr.strip().splitlines())) == (1, "", 1), (name, r.stderr)
        assert r.stderr.startswith("tinybook onnx run: ") and want in r.stderr, (name, r.stderr)
