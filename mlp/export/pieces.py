"""The code cells every exported notebook shares: the model, the loss, the optimizer, the loop.

Each piece is the plain-PyTorch form of what the engine does (mlp.model, mlp.train), written for
a reader: the same initial weights from the same seed (mlp.model.init_linear_), the same batch
order (mlp.train.batches: one `randperm` an epoch from a generator seeded with the run's seed, none
for a full batch), the same update (the optimizers' table's torch.optim class), schedule
(mlp.train.schedule.lr_factor), penalties (mlp.train.penalty), clipping and dropout masks. A piece
only shows what the run uses: no schedule code for a constant rate, no L1 step without L1.
tests/test_export.py runs the result beside the library and compares the numbers.
"""

from __future__ import annotations

import inspect
from itertools import pairwise
from typing import Any

import torch

from mlp.activations import ACTIVATIONS
from mlp.export.notebook import fill, literal
from mlp.model import ModelConfig
from mlp.train.config import STEP_MILESTONES, TrainConfig
from mlp.train.optimizers import OPTIMIZERS

# Each init scheme as the notebook writes it for a layer (mlp.model.init_linear_'s, drawn in the
# same order from the same generator): (what it is, the weight's line, the bias's line).
INIT_CODE = {
    "kaiming": (
        "He initialisation: Var(W) = 2 / fan_in keeps ReLU-like units' outputs at scale; b = 0",
        'nn.init.kaiming_normal_(layer.weight, nonlinearity="relu", generator=generator)',
        "nn.init.zeros_(layer.bias)",
    ),
    "xavier": (
        "Glorot initialisation: Var(W) = 2 / (fan_in + fan_out); b = 0",
        "nn.init.xavier_normal_(layer.weight, generator=generator)",
        "nn.init.zeros_(layer.bias)",
    ),
    "normal": (
        "small random numbers: W ~ N(0, 0.02²); b = 0",
        "nn.init.normal_(layer.weight, 0.0, 0.02, generator=generator)",
        "nn.init.zeros_(layer.bias)",
    ),
    "pytorch": (
        "PyTorch's own nn.Linear init, seeded: W and b uniform in ±1/√fan_in",
        "nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)",
        "bound = 1 / math.sqrt(layer.in_features)\n"
        "nn.init.uniform_(layer.bias, -bound, bound, generator=generator)",
    ),
}


def activation_code(name: str) -> str:
    """The activation's torch.nn module as code: `nn.ReLU()`, `nn.LeakyReLU(negative_slope=0.01)`."""
    return f"nn.{ACTIVATIONS[name].module()!r}".replace("'", '"')  # as ruff writes a string


def model_code(config: ModelConfig) -> str:
    """The model definition alone, every layer written out: the page's "Copy as code"."""
    act = activation_code(config.activation)
    widths = config.widths
    lines = []
    for n_in, n_out in pairwise(widths[:-1]):
        lines += [f"    nn.Linear({n_in}, {n_out}),", f"    {act},"]
        if config.dropout:
            lines.append(f"    nn.Dropout({config.dropout!r}),")
    lines.append(f"    nn.Linear({widths[-2]}, {widths[-1]}),  # the logits")
    return "from torch import nn\n\nmodel = nn.Sequential(\n" + "\n".join(lines) + "\n)\n"


def activations_code() -> str:
    """`ACTIVATIONS`: torch.nn's module for each activation the pages offer, by its name."""
    rows = "\n".join(f"    {literal(name)}: {activation_code(name)}," for name in ACTIVATIONS)
    return f"ACTIVATIONS = {{  # torch.nn's module for each activation the page offers\n{rows}\n}}"


def model_cell(config: ModelConfig, inputs: str, outputs: str, choose: bool = True) -> str:
    """Builds `model` from SETTINGS["hidden"] (and "dropout"), initialised from SETTINGS["seed"];
    `choose`: its activation from SETTINGS["activation"], else the run's written in."""
    what, weight, bias = INIT_CODE[config.init]
    dropout = (
        '\n    layers.append(nn.Dropout(SETTINGS["dropout"]))  # zero each unit with this probability'
        if config.dropout
        else ""
    )
    return fill(
        """$table
widths = [$inputs, *SETTINGS["hidden"], $outputs]
layers = []
for n_in, n_out in pairwise(widths[:-1]):  # each hidden layer
    layers += [nn.Linear(n_in, n_out), $act]$dropout
layers.append(nn.Linear(widths[-2], widths[-1]))  # the output layer: the logits
model = nn.Sequential(*layers)

# $what.
# Drawn from a generator of its own, layer by layer: the same seed, the same initial weights.
generator = torch.Generator().manual_seed(SETTINGS["seed"])
with torch.no_grad():
    for layer in model:
        if isinstance(layer, nn.Linear):
            $weight
            $bias
print(model)
""",
        inputs=inputs,
        outputs=outputs,
        table=activations_code() + "\n\n" if choose else "",
        act='ACTIVATIONS[SETTINGS["activation"]]' if choose else activation_code(config.activation),
        dropout=dropout,
        what=what,
        weight=weight,
        bias=bias.replace("\n", "\n" + " " * 12),
    )


def loss_cell(cfg: TrainConfig) -> str:
    """`loss_of(logits, y)`: the data loss (cross-entropy or MSE), plus L2's term if any; and the
    weights and biases, which the penalties and weight decay tell apart."""
    if cfg.loss == "mse":
        data = (
            "def data_loss(outputs, y):\n"
            '    """The mean squared error (1/N) Σ (ŷ - y)² of the one output ŷ."""\n'
            "    return (outputs[:, 0] - y).square().mean()"
        )
    else:
        data = (
            "def data_loss(logits, y):\n"
            '    """Softmax cross-entropy, the batch\'s mean: F.cross_entropy takes the logits."""\n'
            "    return F.cross_entropy(logits, y)"
        )
    lines = [
        "weights = [p for p in model.parameters() if p.ndim >= 2]  # the penalties cover these",
        "biases = [p for p in model.parameters() if p.ndim < 2]  # and never these",
        "",
        "",
        data,
        "",
        "",
        "def loss_of(outputs, y):",
    ]
    if cfg.l2:
        lines += [
            '    """The data loss plus L2\'s λ₂·Σw²: autograd derives its gradient 2λ₂·w."""',
            "    l2 = torch.stack([(w * w).sum() for w in weights]).sum()",
            '    return data_loss(outputs, y) + SETTINGS["l2"] * l2',
        ]
    else:
        lines += ['    """The loss training minimises."""', "    return data_loss(outputs, y)"]
    return "\n".join(lines)


def optimizer_cell(cfg: TrainConfig) -> str:
    """The torch.optim optimizer of the run's row, over two groups (decay on the weights only),
    and `lr_at(step)` when the rate changes as training goes."""
    # fused: one kernel for the whole update where torch.optim has one, as the engine runs it
    made = OPTIMIZERS[cfg.optimizer].torch_class([{"params": [torch.zeros(1)]}], cfg, True)
    cls = type(made)
    signature = inspect.signature(cls)
    args = ['lr=SETTINGS["lr"]']
    for key, value in made.defaults.items():
        param = signature.parameters.get(key)
        if key == "momentum" and "momentum" in OPTIMIZERS[cfg.optimizer].reads:
            args.append('momentum=SETTINGS["momentum"]')  # even at torch's default: SETTINGS sets it
            continue
        if key in ("lr", "weight_decay") or param is None or param.default == value:
            continue
        args.append(f"{key}={value!r}")
    code = fill(
        """
groups = [
    {"params": weights, "weight_decay": SETTINGS["weight_decay"]},  # decay on the weights
    {"params": biases, "weight_decay": 0.0},  # never on the biases
]
# The page's optimizer$fused
optimizer = torch.optim.$cls($args)
""",
        fused=(
            ". fused=True: its whole update in one kernel, as the page runs it (torch 2.4 and later)"
            if made.defaults.get("fused")
            else "."
        ),
        cls=cls.__name__,
        args=wrapped(["groups", *args], len("optimizer = torch.optim.()") + len(cls.__name__)),
    )
    return code.strip("\n") + ("\n\n\n" + schedule_code(cfg) if scheduled(cfg) else "")


def wrapped(args: list[str], taken: int, width: int = 110) -> str:
    """A call's arguments as ruff formats them: on its line if they fit, else on one of their own."""
    one = ", ".join(args)
    return one if taken + len(one) <= width else f"\n    {one}\n"


def optimizer_markdown(cfg: TrainConfig) -> str:
    """The optimizer's Markdown cell: what it does, and whether the rate changes."""
    row = OPTIMIZERS[cfg.optimizer]
    text = f"## The optimizer\n\n{row.label}: {row.help[0].lower()}{row.help[1:]}"
    if scheduled(cfg):
        text += " The learning rate changes as training goes: `lr_at(step)` gives it."
    return text


def scheduled(cfg: TrainConfig) -> bool:
    """Whether the learning rate changes during the run (a schedule or a warmup)."""
    return cfg.scheduler != "none" or cfg.warmup_epochs > 0


def schedule_code(cfg: TrainConfig) -> str:
    """`lr_at(step)`: mlp.train.schedule.lr_factor's closed form for this run's schedule."""
    body = [
        "def lr_at(step):",
        '    """The learning rate of optimizer step `step` (0-based): warmup, then the schedule."""',
        '    warmup = round(SETTINGS["warmup_epochs"] * STEPS_PER_EPOCH)',
        "    if step < warmup:  # a linear rise",
        '        return SETTINGS["lr"] * ((step + 1) / (warmup + 1))',
    ]
    if cfg.scheduler == "cosine":
        body += [
            "    # a half cosine from lr down to lr × min_lr_ratio at the last step",
            '    horizon = max(1, SETTINGS["epochs"] * STEPS_PER_EPOCH - warmup)',
            "    progress = min(1.0, (step - warmup) / horizon)",
            '    floor = SETTINGS["min_lr_ratio"]',
            '    return SETTINGS["lr"] * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))',
        ]
    elif cfg.scheduler == "step" and cfg.step_epochs > 0:
        body += [
            "    # times gamma every step_epochs epochs",
            '    drops = math.floor(step / max(1, round(SETTINGS["step_epochs"] * STEPS_PER_EPOCH)))',
            '    return SETTINGS["lr"] * SETTINGS["gamma"] ** drops',
        ]
    elif cfg.scheduler == "step":
        low, high = STEP_MILESTONES
        body += [
            f"    # times gamma at {low:g} and at {high:g} of the run",
            '    total = SETTINGS["epochs"] * STEPS_PER_EPOCH',
            f"    drops = sum(step >= round(f * total) for f in ({low!r}, {high!r}))",
            '    return SETTINGS["lr"] * SETTINGS["gamma"] ** drops',
        ]
    else:
        body.append('    return SETTINGS["lr"]')
    return "\n".join(body)


def schedule_settings(cfg: TrainConfig) -> dict[str, Any]:
    """The settings `schedule_code` reads, for SETTINGS."""
    if not scheduled(cfg):
        return {}
    values: dict[str, Any] = {"warmup_epochs": cfg.warmup_epochs}
    if cfg.scheduler == "cosine":
        values["min_lr_ratio"] = cfg.min_lr_ratio
    elif cfg.scheduler == "step":
        values |= {"gamma": cfg.gamma} | ({"step_epochs": cfg.step_epochs} if cfg.step_epochs > 0 else {})
    return values


def train_settings(cfg: TrainConfig, batch_size: int | None = None) -> dict[str, Any]:
    """SETTINGS' training part: what the code the run's notebook holds reads, nothing else (the
    optimizer and the schedule are code: their class and their branch). `batch_size`: as the
    page gives it, if not the config's (the playground's 0: the whole training set)."""
    values: dict[str, Any] = {"lr": cfg.lr}
    if "momentum" in OPTIMIZERS[cfg.optimizer].reads:
        values["momentum"] = cfg.momentum
    values |= {"weight_decay": cfg.weight_decay}
    values |= {"l1": cfg.l1} if cfg.l1 else {}
    values |= {"l2": cfg.l2} if cfg.l2 else {}
    values |= {"grad_clip": cfg.grad_clip} if cfg.grad_clip else {}
    batch = cfg.batch_size if batch_size is None else batch_size
    return values | schedule_settings(cfg) | {"batch_size": batch, "epochs": cfg.epochs}


def step_lines(cfg: TrainConfig, indent: str) -> str:
    """One optimizer step on (xb, yb), as the engine takes it: the rate, the gradients, clipping,
    the update, L1's proximal step. Leaves `loss`, the batch's loss as training reports it."""
    lines = []
    if scheduled(cfg):
        lines += ["lr = lr_at(step)", "for group in optimizer.param_groups:", '    group["lr"] = lr']
    lines += [
        "optimizer.zero_grad()",
        "outputs = model(xb)",
        "loss = loss_of(outputs, yb)",
        "loss.backward()",
    ]
    if cfg.l1:  # the loss shown: with λ₁·Σ|w|, whose step comes after the update
        lines.append(
            'loss = loss.detach() + SETTINGS["l1"] * torch.stack([w.abs().sum() for w in weights]).sum()'
        )
    if cfg.grad_clip:
        lines.append('nn.utils.clip_grad_norm_(model.parameters(), SETTINGS["grad_clip"])  # the global norm')
    lines.append("optimizer.step()")
    if cfg.l1:
        rate = "lr" if scheduled(cfg) else 'SETTINGS["lr"]'
        scale = OPTIMIZERS[cfg.optimizer].scale_code
        lines += [
            "with torch.no_grad():  # L1's proximal step: each weight t nearer 0, exactly 0 if it crosses",
            "    for w in weights:",
            f'        t = {rate} * SETTINGS["l1"]',
        ]
        if scale:
            lines += [
                "        state = optimizer.state[w]  # scaled per weight, as the optimizer scales a step",
                f"        t = t * ({scale})",
            ]
        lines.append("        w.copy_(torch.where(w.abs() > t, w - torch.sign(w) * t, 0.0))")
    return "\n".join(indent + line if line else line for line in lines)


def loop_cell(cfg: TrainConfig, dropout: bool, threads: int | None = None, scored: str = "test") -> str:
    """`evaluate`, then the training loop over train_inputs/train_labels, a line every so often,
    each epoch scored on `scored`_inputs/_labels ("test", or MNIST's "val") and kept in `history`.
    `threads`: the CPU threads the page trained with, if it chose them (a sum split over more
    threads adds in another order: the last bits differ, and over many steps the numbers)."""
    regress = cfg.loss == "mse"
    if regress:
        evaluate = '''
def evaluate(inputs, values):
    """The mean squared error and R² of the network's output on a set."""
    model.eval()
    with torch.no_grad():
        predicted = model(inputs)[:, 0].double()
    model.train()
    values = values.double()
    mse = (predicted - values).square().mean().item()
    r2 = 1 - (values - predicted).square().sum().item() / (values - values.mean()).square().sum().item()
    return mse, r2
'''
        line = (
            'f"epoch {epoch:>5}: train MSE {train_loss:.4f}, test MSE {test_loss:.4f}, "\n'
            '            f"test R² {test_score:.3f}"'
        )
    else:
        evaluate = '''
def evaluate(inputs, labels):
    """The mean loss and the accuracy on a set, dropout off (eval mode)."""
    model.eval()
    with torch.no_grad():
        logits = model(inputs)
    model.train()
    loss = F.cross_entropy(logits, labels, reduction="sum").double().item() / len(labels)
    return loss, (logits.argmax(1) == labels).sum().item() / len(labels)
'''
        line = (
            'f"epoch {epoch:>5}: train loss {train_loss:.4f}, test loss {test_loss:.4f}, "\n'
            '            f"test accuracy {test_score:.4f}"'
        )
    seeds = (
        "torch.manual_seed(SETTINGS[\"seed\"])  # dropout's masks: the only draws from torch's own\n"
        if dropout
        else ""
    )
    template = LOOP if scored == "test" else LOOP.replace("test", scored)
    return fill(
        template,
        evaluate=evaluate.strip("\n"),
        seeds=seeds,
        threads=(
            f"# {threads} CPU thread{'s' * (threads != 1)}, as the page trained it: its sums add up in the "
            "same order.\n# (It holds for the whole session: remove it to use every core, and the last "
            "digits may move.)\n"
            f"torch.set_num_threads({threads})\n\n\n"
            if threads
            else ""
        ),
        exploded="math.inf  # a regression's loss has no chance level"
        if regress
        else "10 * math.log(model[-1].out_features)",
        step=step_lines(cfg, " " * 8),
        line=line.replace("test", scored),
    )


def sizes_code() -> str:
    """N, BATCH and STEPS_PER_EPOCH from the training set and SETTINGS (the schedule reads them)."""
    return (
        "N = len(train_labels)\n"
        'BATCH = min(SETTINGS["batch_size"] or N, N)  # 0, or more than N: the whole set at once\n'
        "STEPS_PER_EPOCH = -(-N // BATCH)"
    )


def shown_cell(regress: bool) -> str:
    """The last cell: the numbers the page shows, of the last epoch that trained soundly (the
    page's too), the test score last."""
    lines = (
        [
            'print(f"train MSE: {train_loss:.4f}")',
            'print(f"test R²: {test_score:.3f}")',
            'print(f"test MSE: {test_loss:.4f}")',
        ]
        if regress
        else [
            'print(f"train loss: {train_loss:.4f}")',
            'print(f"test loss: {test_loss:.4f}")',
            'print(f"test accuracy: {test_score:.4f}")',
        ]
    )
    return "\n".join(
        [
            "if shown is None:",
            '    print("the loss exploded in the first epoch: no epoch to show")',
            "else:",
            "    train_loss, test_loss, test_score = shown",
            *(f"    {line}" for line in lines),
        ]
    )


SHOW_FIGURE = """
if "ipykernel" in sys.modules:  # in Jupyter or Colab: drawn below this cell
    fig.show()
else:  # run as a script: a page of its own
    fig.write_html("$name")
    print("the picture: $name")
"""


LOOP = """$threads$evaluate


$seeds# The batch order: a new permutation every epoch from a generator seeded with the run's seed
# (a full batch draws none).
batch_order = torch.Generator().manual_seed(SETTINGS["seed"])
REPORT_EVERY = max(1, SETTINGS["epochs"] // 10)  # a line every tenth of the run
# The page stops a run whose epoch's loss is not a number, or (classes) 10 × chance's, ln K, or more
EXPLODED = $exploded
shown = None  # (train loss, test loss, test score: accuracy, or R²) of the last sound epoch
history = []  # (epoch, train loss, test loss, test score) of every epoch
step = 0
model.train()
for epoch in range(1, SETTINGS["epochs"] + 1):
    if BATCH < N:
        order = torch.randperm(N, generator=batch_order)
        inputs, labels = train_inputs[order], train_labels[order]
    else:
        inputs, labels = train_inputs, train_labels
    loss_sum = 0.0
    for start in range(0, N, BATCH):
        xb, yb = inputs[start : start + BATCH], labels[start : start + BATCH]
$step
        step += 1
        loss_sum += loss.item() * len(yb)
    train_loss = loss_sum / N  # the epoch's mean, as the page's curve shows it
    if not train_loss <= EXPLODED:
        print(f"epoch {epoch}: the loss exploded to {train_loss:.3g}; try a smaller learning rate")
        break
    test_loss, test_score = evaluate(test_inputs, test_labels)
    shown = train_loss, test_loss, test_score
    history.append((epoch, *shown))
    if epoch % REPORT_EVERY == 0 or epoch == SETTINGS["epochs"]:
        print(
            $line
        )
"""


def add_training(
    nb, cfg: TrainConfig, dropout: bool, threads: int | None, items: str, scored: str = "test"
) -> None:
    """The cells every notebook trains with: the loss's code, the optimizer (its words and code),
    and the loop, each epoch over the training `items` ("points", "digits") scored on `scored`."""
    nb.code(loss_cell(cfg))
    nb.md(optimizer_markdown(cfg))
    nb.code(optimizer_cell(cfg))
    name = {"test": "test", "val": "validation"}[scored]
    nb.md(
        f"## Training\n\nAn epoch is a pass over the training {items} in batches; after each, the "
        f"{name} {items} are scored."
    )
    nb.code(loop_cell(cfg, dropout, threads, scored))
