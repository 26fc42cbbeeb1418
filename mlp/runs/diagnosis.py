"""What the playground says about a run that went wrong, naming the cause the run shows.

Three ways a small network fails in front of a class look alike on the curves (a loss that
won't fall) and have different cures, so they are told apart by what the network holds:

- **diverged** (the loss turned NaN or exploded): the learning rate. The trainer has noticed and
  put the last good weights back.
- **a fading signal**: each layer's weights shrink what comes in (their spread times √fan-in,
  the factor by which a layer scales its input's spread, far below 1), so after a deep stack the
  output sees almost nothing of the input and the gradients fade as much on the way back; the
  loss sits at chance level (ln K). The cause is the initialisation, not the learning rate.
- **dead ReLUs**: units that output 0 for every training point, whose weights are of ordinary
  size. A step too large threw their inputs below 0, where ReLU has no slope: the learning rate,
  or ReLU itself (leaky ReLU keeps a little gradient there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

FADED = 1e-3  # the layers together scale their input's spread by less than this
STALLED = 0.02  # a train loss within 2% of ln K is a guess's
STALL_EPOCHS = 10  # ...after at least this many epochs


@torch.no_grad()
def signal_gain(layers: Sequence[torch.nn.Linear]) -> float:
    """The factor by which the layers together scale their input's spread, at most: the product
    of each weight matrix's spread times √fan-in (He init gives √2 a layer, ReLU then halves the
    variance; N(0, 0.02) on 32 inputs gives 0.11)."""
    gain = 1.0
    for layer in layers:
        W = layer.weight
        if W.numel() > 1:  # one weight has no spread
            gain *= float(W.std()) * math.sqrt(W.shape[1])
    return gain


def stalled(train_loss: float | None, epochs: int, classes: int) -> bool:
    """Whether the run has sat at chance level for a while."""
    if train_loss is None or epochs < STALL_EPOCHS or classes < 2:
        return False
    return abs(train_loss - math.log(classes)) <= STALLED * math.log(classes)


def diverged_text(message: str, good_step: int) -> str:
    return (
        f"**Training diverged: the learning rate is too large.** {message} The boundary and the "
        f"numbers show the last good model, from step {good_step:,}. Press **Reset** to start again "
        "from the same initial weights."
    )


def faded_text(gain: float, hidden_layers: int, classes: int) -> str:
    """`classes` < 2: a regression's one output, whose loss stays where predicting ~0 puts it."""
    chance = (
        f"at chance, ln {classes} = {math.log(classes):.3f}" if classes > 1 else "where predicting 0 puts it"
    )
    return (
        f"**The signal fades away: the initialisation is too small.** Together the {hidden_layers} "
        f"hidden layers and the output layer scale their input by about {gain:.0e}, so the output "
        "sees almost nothing of it (deep units look dead: they output about 0) and the "
        f"gradients fade as much on the way back: the loss stays {chance}. A lower learning rate "
        "won't help; choose **He** (kaiming) "
        "initialisation and press **Reset**."
    )


def dead_text(dead: Sequence[tuple[int, int, int]], activation: str) -> str:
    layers = ", ".join(f"{d} of {u} units in layer {layer}" for layer, d, u in dead)
    cure = "Lower the learning rate" + (", or switch to leaky ReLU," if activation == "relu" else "")
    return (
        f"**Units have died: a step was too large.** {layers} output 0 for every training point: "
        "a big step threw their inputs below 0, where ReLU has no slope, so no gradient reaches "
        f"them again. {cure} and press **Reset**."
    )


def done_text(epochs: int) -> str:
    return f"Reached {epochs:,} epochs, the run's length. Raise *Epochs* to keep training."
