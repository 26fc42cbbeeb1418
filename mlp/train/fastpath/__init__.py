"""The fast path: a small network's whole training step as one NumPy computation on the CPU,
the same math and the same buffers as torch's path, without its per-operation dispatch.

choice   which path a step takes, and why not the fast one (the rule's one home), in a sentence
step     the NumPy step itself: forward, loss, backprop by hand, clipping, the optimizer's
         NumPy form (mlp.train.optimizers), L1's step
columns  an MLP's math one example a column, which the step trains with and the plane draws
"""

from mlp.train.fastpath.choice import (
    TorchPath,
    config_problem,
    describe_path,
    make_path,
    numpy_inference,
    path_problem,
    path_sentence,
    switch_path,
)
from mlp.train.fastpath.step import NumpyPath

__all__ = [
    "NumpyPath",
    "TorchPath",
    "config_problem",
    "describe_path",
    "make_path",
    "numpy_inference",
    "path_problem",
    "path_sentence",
    "switch_path",
]
