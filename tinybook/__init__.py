__version__ = "0.0.1"
from tinybook.helpers import Context
from tinybook.dtype import dtypes, DType
from tinybook.uop import UOp, Ops
from tinybook.tensor import Tensor
import tinybook.ops, tinybook.elementwise, tinybook.reduce, tinybook.functional  # noqa: E401, 01-01c: the Tensor API
import tinybook.autograd, tinybook.schedule, tinybook.engine, tinybook.codegen  # noqa: E401, 02-04
import tinybook.renderer  # noqa: E401
import tinybook.device, tinybook.runtime, pkgutil, importlib  # noqa: E401
for _m in pkgutil.iter_modules(tinybook.runtime.__path__):  # each runtime module registers its device
    importlib.import_module(f"tinybook.runtime.{_m.name}")
from tinybook import nn
import tinybook.nn.state, tinybook.nn.optim  # noqa: E401
from tinybook.jit import TinyJit, Variable  # noqa: F401
# 09: GGUF, models, `tinybook llm serve` and `bench` (the [llm] extra adds tokenizers and the server's packages)
import tinybook.llm.gguf, tinybook.llm.model, tinybook.llm.serve, tinybook.llm.bench  # noqa: F401, E401
from tinybook.engine import Device  # noqa: F401
from tinybook.device import GlobalCounters  # noqa: F401
from importlib.util import find_spec
if find_spec("onnx"): import tinybook.onnx  # noqa: F401, E401, 10: the ONNX runner, `tinybook onnx run` ([onnx] extra)
