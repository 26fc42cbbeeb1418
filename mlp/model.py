"""The MLP as a PyTorch module, and its conversion to the manual parameter list."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mlp.activations import ACTIVATIONS

INITS = ("kaiming", "xavier", "normal", "pytorch")
MAX_HIDDEN_LAYERS = 16
MAX_WIDTH = 65_536

# (W, b) with W of shape (in, out), as the notes write X @ W + b.
Params = list[tuple[Any, Any]]


@dataclass
class ModelConfig:
    """Everything needed to rebuild an MLP: the architecture, not the weights."""

    d_in: int  # input features (2 for the toy sets, 784 for MNIST)
    hidden: list[int] = field(default_factory=list)  # hidden widths; [] = softmax regression
    d_out: int = 2  # classes K
    activation: str = "relu"  # one of ACTIVATIONS
    init: str = "kaiming"  # one of INITS
    dropout: float = 0.0  # drop probability after each hidden activation

    def __post_init__(self) -> None:
        self.hidden = [int(h) for h in self.hidden]
        check_architecture(self.d_in, self.hidden, self.d_out)
        if self.activation not in ACTIVATIONS:
            raise ValueError(
                f"Unknown activation {self.activation!r}; choose one of {', '.join(ACTIVATIONS)}."
            )
        if self.init not in INITS:
            raise ValueError(f"Unknown init {self.init!r}; choose one of {', '.join(INITS)}.")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"Dropout must be in [0, 1); got {self.dropout}.")

    @property
    def widths(self) -> list[int]:
        """Layer widths from input to output: [d_in, *hidden, d_out]."""
        return [self.d_in, *self.hidden, self.d_out]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_architecture(d_in: int, hidden: Sequence[int], d_out: int) -> None:
    """Raise ValueError with the allowed range if the widths can't make a network."""
    for name, width in [("d_in", d_in), *((f"hidden[{i}]", h) for i, h in enumerate(hidden))]:
        if not 1 <= int(width) <= MAX_WIDTH:
            raise ValueError(f"{name} must be a width between 1 and {MAX_WIDTH}; got {width}.")
    if not 1 <= int(d_out) <= MAX_WIDTH:
        raise ValueError(f"d_out (number of classes) must be between 1 and {MAX_WIDTH}; got {d_out}.")
    if len(hidden) > MAX_HIDDEN_LAYERS:
        raise ValueError(f"At most {MAX_HIDDEN_LAYERS} hidden layers; got {len(hidden)}.")


def init_linear_(W: torch.Tensor, b: torch.Tensor, scheme: str, generator: torch.Generator) -> None:
    """Fill a weight W (out, in) and bias b (out,) in place with a named scheme."""
    with torch.no_grad():
        if scheme == "kaiming":  # He normal: Var(W) = 2 / fan_in keeps ReLU activations' scale
            nn.init.kaiming_normal_(W, nonlinearity="relu", generator=generator)
            b.zero_()
        elif scheme == "xavier":  # Glorot normal: Var(W) = 2 / (fan_in + fan_out)
            nn.init.xavier_normal_(W, generator=generator)
            b.zero_()
        elif scheme == "normal":  # N(0, 0.02): the "small random numbers" recipe
            nn.init.normal_(W, 0.0, 0.02, generator=generator)
            b.zero_()
        elif scheme == "pytorch":  # what nn.Linear.reset_parameters does, seeded
            nn.init.kaiming_uniform_(W, a=math.sqrt(5), generator=generator)
            bound = 1.0 / math.sqrt(W.shape[1])
            nn.init.uniform_(b, -bound, bound, generator=generator)
        else:
            raise ValueError(f"Unknown init {scheme!r}; choose one of {', '.join(INITS)}.")


class MLP(nn.Module):
    """Linear -> activation (-> dropout) for each hidden layer, then a linear layer to logits."""

    def __init__(
        self,
        d_in: int,
        hidden: Sequence[int],
        d_out: int,
        activation: str = "relu",
        init: str = "kaiming",
        dropout: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.config = ModelConfig(d_in, list(hidden), d_out, activation, init, dropout)
        widths = self.config.widths
        # Built on the meta device so construction draws nothing from the global RNG, then given
        # empty CPU tensors (reset_parameters fills them). Not `to_empty`: on meta tensors it takes
        # torch's Python reference path, whose first use imports SymPy (0.7 s of a fresh
        # process's first network: a fresh server's first MNIST run, or first playground).
        self.layers = nn.ModuleList(nn.Linear(n_in, n_out, device="meta") for n_in, n_out in pairwise(widths))
        for layer in self.layers:
            layer.weight = nn.Parameter(torch.empty(layer.weight.shape))
            layer.bias = nn.Parameter(torch.empty(layer.bias.shape))
        row = ACTIVATIONS[self.config.activation]  # the activations' table (mlp/activations.py)
        self.act = row.module()  # shows in print(model); forward uses _act
        self._act = row.torch
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()  # shows in print(model)
        self._has_dropout = dropout > 0
        # Dropout masks' own random stream: a trainer sets a seeded one, so masks depend on the
        # run's seed alone, never on torch's global RNG (shared by every thread of a server).
        # None: nn.Dropout, which draws from the global RNG.
        self.generator: torch.Generator | None = None
        self._linear: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self.reset_parameters(seed)

    @classmethod
    def from_config(cls, config: ModelConfig, seed: int = 0) -> MLP:
        c = config
        return cls(c.d_in, c.hidden, c.d_out, c.activation, c.init, c.dropout, seed=seed)

    def reset_parameters(self, seed: int = 0) -> None:
        """Initialise every layer with the configured scheme; same seed, same weights."""
        generator = torch.Generator().manual_seed(int(seed))
        device = self.layers[0].weight.device
        for layer in self.layers:
            # Draw on the CPU so a seed gives the same weights on every device.
            W = torch.empty(layer.out_features, layer.in_features, dtype=layer.weight.dtype)
            b = torch.empty(layer.out_features, dtype=layer.bias.dtype)
            init_linear_(W, b, self.config.init, generator)
            with torch.no_grad():
                layer.weight.copy_(W.to(device))
                layer.bias.copy_(b.to(device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (N, d_out) for inputs (N, d_in)."""
        # Written for the hot loop: slicing a ModuleList builds a new one, and a module call
        # (its hooks machinery) costs about as much as a small matmul, so F.linear it is.
        *hidden, (W, b) = self.linears()
        for W_h, b_h in hidden:
            x = self._act(F.linear(x, W_h, b_h))
            if self._has_dropout and self.training:
                x = self._dropout(x)
        return F.linear(x, W, b)

    def linears(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """[(weight, bias)] of each layer; looked up through nn.Module once, not every step."""
        if self._linear is None:
            self._linear = [(layer.weight, layer.bias) for layer in self.layers]
        return self._linear

    def _apply(self, fn, recurse: bool = True):
        self._linear = None  # .to(), .double(), ...: the parameters may be new objects
        return super()._apply(fn, recurse)

    def _dropout(self, x: torch.Tensor) -> torch.Tensor:
        """Inverted dropout: zero each unit with probability p, scale the rest by 1 / (1 - p)."""
        if self.generator is None:
            return self.drop(x)
        keep = 1.0 - self.config.dropout
        mask = torch.empty_like(x).bernoulli_(keep, generator=self.generator)
        return x * mask.div_(keep)

    def activations(self, x: torch.Tensor) -> list[torch.Tensor]:
        """Every hidden layer's post-activation output, then the logits (no dropout)."""
        outputs = []
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < last:
                x = self._act(x)
            outputs.append(x)
        return outputs

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def to_manual(self, like: str = "torch") -> Params:
        """The weights as [(W, b)] with W (in, out): detached copies, torch or NumPy ('numpy')."""
        params = [(layer.weight.detach().T.clone(), layer.bias.detach().clone()) for layer in self.layers]
        if like == "numpy":
            return [(W.cpu().numpy(), b.cpu().numpy()) for W, b in params]
        return params

    def load_manual(self, params: Params) -> MLP:
        """Copy [(W, b)] with W (in, out) into this module's layers; returns self."""
        if len(params) != len(self.layers):
            raise ValueError(f"Expected {len(self.layers)} (W, b) pairs; got {len(params)}.")
        with torch.no_grad():
            for i, (layer, (W, b)) in enumerate(zip(self.layers, params, strict=True), start=1):
                W = torch.as_tensor(np.asarray(W) if not torch.is_tensor(W) else W)
                b = torch.as_tensor(np.asarray(b) if not torch.is_tensor(b) else b)
                expected = (layer.in_features, layer.out_features)
                if tuple(W.shape) != expected or tuple(b.shape) != (layer.out_features,):
                    raise ValueError(
                        f"Layer {i}: expected W {expected} and b ({layer.out_features},); "
                        f"got W {tuple(W.shape)} and b {tuple(b.shape)}."
                    )
                layer.weight.copy_(W.T)
                layer.bias.copy_(b)
        return self

    @classmethod
    def from_manual(
        cls, params: Params, activation: str = "relu", dropout: float = 0.0, init: str = "kaiming"
    ) -> MLP:
        """Build a module whose layers hold exactly these [(W, b)] weights."""
        if not params:
            raise ValueError("A network needs at least one (W, b) layer.")
        widths = [int(params[0][0].shape[0])] + [int(W.shape[1]) for W, _ in params]
        model = cls(widths[0], widths[1:-1], widths[-1], activation, init, dropout)
        dtype = params[0][0].dtype
        if torch.is_tensor(params[0][0]) and dtype != torch.float32:
            model = model.to(dtype)
        elif not torch.is_tensor(params[0][0]) and dtype == np.float64:
            model = model.double()
        return model.load_manual(params)

    def extra_repr(self) -> str:
        c = self.config
        return f"widths={c.widths}, activation={c.activation}, init={c.init}, dropout={c.dropout}"
