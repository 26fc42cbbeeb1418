"""One training engine for every page: a typed config, a step-at-a-time Trainer, and `fit`.

config     TrainConfig and its choices; the rule "the manual engine has no dropout"
schedule   learning-rate schedules (one closed form for the optimizer and the plots)
optimizers the optimizers' table: each one's torch update, NumPy update, torch.optim class, label
adam       Adam's torch rule, and its fused CPU kernel called directly (a large group's fast update)
optim      the Stepper: a row's update on flat groups, weight decay on weights only, L1's step
batches    the data on the device, batches sliced from a seeded permutation
gradients  autograd, or mlp.manual's backprop, filling each .grad
guard      NaN or infinite loss: put back the last sound weights
meter      running totals on the device, busy time, a smoothed rate
report     totals and time into reports and epoch records
history    the records, and the same as arrays for plots
threads    CPU threads measured on the first steps
inference  the batch loss (cross-entropy or MSE), probabilities, outputs and evaluation, in eval mode
fastpath/  the fast path: a small network's step as one NumPy computation on the CPU (which
           path a step takes and why, the step, one example a column)
trainer    the Trainer (the stepping loop) and fit
"""

from mlp.train.config import (
    ENGINES,
    LOSSES,
    MANUAL_HAS_NO_DROPOUT,
    OPTIMIZERS,
    SCHEDULERS,
    TrainConfig,
    engine_problem,
    supports_dropout,
    uses_momentum,
)
from mlp.train.fastpath.choice import describe_path
from mlp.train.history import EpochRecord, History, Progress
from mlp.train.inference import (
    as_tensor,
    batch_loss,
    eval_mode,
    evaluate,
    predict_outputs,
    predict_proba,
    prepare_inputs,
)
from mlp.train.optim import Stepper, make_optimizer
from mlp.train.schedule import describe_schedule, lr_factor
from mlp.train.trainer import Callback, Trainer, fit

__all__ = [
    "ENGINES",
    "LOSSES",
    "MANUAL_HAS_NO_DROPOUT",
    "OPTIMIZERS",
    "SCHEDULERS",
    "Callback",
    "EpochRecord",
    "History",
    "Progress",
    "Stepper",
    "TrainConfig",
    "Trainer",
    "as_tensor",
    "batch_loss",
    "describe_path",
    "describe_schedule",
    "engine_problem",
    "eval_mode",
    "evaluate",
    "fit",
    "lr_factor",
    "make_optimizer",
    "predict_outputs",
    "predict_proba",
    "prepare_inputs",
    "supports_dropout",
    "uses_momentum",
]
