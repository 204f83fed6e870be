__version__ = "0.0.1"
from tinybook.tensor import Tensor, dtypes, DType, UOp, Ops
import tinybook.ops, tinybook.autograd, tinybook.schedule, tinybook.codegen  # noqa: E401, arithmetic, gradients, scheduling, C kernels
from tinybook import nn
import tinybook.nn.state, tinybook.nn.optim  # noqa: E401
