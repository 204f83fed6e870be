__version__ = "0.0.1"
from tinybook.tensor import Tensor, dtypes, DType, UOp, Ops
import tinybook.ops  # noqa: F401, adds arithmetic and the composite API to Tensor
