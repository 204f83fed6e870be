"onnx's own backend test suite against tinybook.onnx: the node tests (with the exclusion list below) and the light_* real models."
import os, re, subprocess, sys, unittest, warnings
import pytest
onnx = pytest.importorskip("onnx"); ort_backend = pytest.importorskip("onnxruntime.backend")
from tinybook.onnx import Backend, node_tests  # noqa: E402

# Every node test onnxruntime passes and tinybook does not, matched by a pattern over its name (test_NAME_cpu), with why.
EXCLUDE = {
    r"^gridsample": "GridSample (sampling at data-dependent coordinates) is not implemented",
    r"^(sequence_|split_to_sequence|identity_sequence|if_seq|loop13_seq)": "sequence values (lists of tensors) are not implemented",
    r"^(identity_opt|if_opt)$": "optional values (Optional, and Identity or If passing one on) are not implemented",
    r"^(string_|equal_string|regex_|strnormalizer)": "string tensors: tinybook's dtypes are numeric only",
    r"^ai_onnx_ml_": "the ai.onnx.ml domain (tree ensembles, label encoders) is outside this chapter",
    r"^tfidfvectorizer": "TfIdfVectorizer (n-gram counting) is not implemented",
    r"^(nonmaxsuppression|unique|compress|nonzero)": "ops whose output shape depends on the data are not implemented",
    r"^(acos|asin|atan)(_example)?$": "Tensor has no inverse trigonometric functions yet",
    r"_fp16": "float16 Attention and CausalConvWithState: tinybook rounds each intermediate to half, onnxruntime keeps float",
    r"^col2im": "Col2Im is not implemented",
    r"deform_conv": "DeformConv is not implemented",
    r"^det_": "Det is not implemented",
    r"^mvn$": "onnx's strict type and shape inference (the runner's full check) fails in MeanVarianceNormalization's "
              "function body when `axes` is left at its default",
    r"^(convinteger|matmulinteger|qlinearconv)": "ConvInteger, MatMulInteger and QLinearConv are not implemented",
    r"^dynamicquantizelinear": "one element off by one: tinybook divides by multiplying with the reciprocal, which moves a rounding tie",
    r"^batchnorm_.*training_mode": "BatchNormalization in training mode (running statistics as outputs) is not implemented",
    r"^maxpool_with_argmax": "MaxPool's Indices output is not implemented",
    r"^maxunpool": "MaxUnpool is not implemented",
    r"^melweightmatrix": "MelWeightMatrix is not implemented",
    r"^mod_float_edge_cases": "Mod with fmod=1 and infinities: tinybook's float remainder gives NaN where C's fmod gives x",
    r"^reversesequence": "ReverseSequence is not implemented",
    r"^scan_sum$": "Scan before opset 9 (a sequence_lens input and a batch axis) is not implemented",
    r"^tensorscatter": "TensorScatter is not implemented",
}

def test_node_tests(capsys):
    "Every node test onnxruntime passes, passes here or is excluded above with a reason; no exclusion is stale."
    warnings.filterwarnings("ignore")
    ort_names, ort_ok = node_tests(ort_backend)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DEV", "PYTHON")  # 03's interpreter: no compiler, the 1884 tiny graphs in seconds
        names, ok = node_tests(Backend)
    assert names == ort_names
    fails = [n[5:-4] for n in sorted(set(ort_ok) - set(ok))]
    with capsys.disabled():
        print(f"\nonnx {onnx.__version__} node tests: onnxruntime passes {len(ort_ok)} of {len(names)}, tinybook passes {len(ok)}: "
              f"{len(ort_ok) - len(fails)} of onnxruntime's ({1 - len(fails) / len(ort_ok):.1%}); {len(fails)} excluded")
    assert [n for n in fails if not any(re.search(p, n) for p in EXCLUDE)] == []  # a new failure, or one the list does not explain
    assert [p for p in EXCLUDE if not any(re.search(p, n) for n in fails)] == []  # an exclusion that now passes: remove it
    assert 1 - len(fails) / len(ort_ok) >= 0.9

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
        cmd = [sys.executable, "-c", "from tinybook.device import main; main()", "onnx", "run", str(tmp_path / name)]
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        assert (r.returncode, r.stdout, len(r.stderr.strip().splitlines())) == (1, "", 1), (name, r.stderr)
        assert r.stderr.startswith("tinybook onnx run: ") and want in r.stderr, (name, r.stderr)
