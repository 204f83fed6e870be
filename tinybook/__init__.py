__version__ = "0.0.1"
from tinybook.tensor import Tensor, dtypes, DType, UOp, Ops
