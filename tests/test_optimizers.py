"""The optimizers' table (mlp/train/optimizers.py): every row agrees with itself in every form,
and everything that offers an optimizer offers the table's rows and nothing else.

A new row is checked here as it is added: its NumPy update against its torch update on the same
state (a small group and one past the fused kernel's bound, with weight decay and L1), the
Stepper against its torch.optim class, a run on the fast path against the torch path, and the
pages' label, help and which settings it reads.
"""

from dataclasses import replace

import numpy as np
import pytest
import torch

from mlp.data import make_2d, split
from mlp.lessons.playground import SPECS, Settings, from_query, to_query
from mlp.model import MLP
from mlp.train import TrainConfig, Trainer, uses_momentum
from mlp.train.optim import Group, Stepper, make_optimizer
from mlp.train.optimizers import FUSED_ADAM_FROM, OPTIMIZERS, optimizer


def twin_groups(size: int, decay: float) -> tuple[Group, Group]:
    """Two flat groups of `size` parameters with the same weights, as a Stepper makes them."""
    made = []
    for _ in range(2):
        p = torch.nn.Parameter(torch.randn(size, generator=torch.Generator().manual_seed(size)))
        made.append(Group([p], decay, fused=True))
    return made[0], made[1]


@pytest.mark.parametrize("size", [300, FUSED_ADAM_FROM + 100])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_numpy_update_is_the_torch_update_on_the_same_state(name, size):
    row, cfg = OPTIMIZERS[name], TrainConfig(optimizer=name, momentum=0.8)
    ours, theirs = twin_groups(size, decay=0.01)
    g = torch.Generator().manual_seed(1)
    for step in range(6):
        grad = torch.randn(size, generator=g)
        ours.grad.copy_(grad)
        theirs.grad.copy_(grad)
        lr = 0.01 * (1 - step / 10)
        row.numpy_step(ours, ours.flat.numpy(), ours.grad.numpy(), lr, cfg)
        row.torch_step(theirs, lr, cfg, {"fused": True, "foreach": None})
    torch.testing.assert_close(ours.flat, theirs.flat, rtol=1e-5, atol=1e-6)
    for a, b in [(ours.exp_avgs, theirs.exp_avgs), (ours.exp_avg_sqs, theirs.exp_avg_sqs)]:
        torch.testing.assert_close(a[0], b[0], rtol=1e-5, atol=1e-7)
    assert float(ours.steps[0]) == float(theirs.steps[0])
    assert (ours.momentum[0] is None) == (theirs.momentum[0] is None)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_stepper_with_l1_moves_as_the_torch_class_then_shrinks(name):
    """The Stepper's update is torch.optim's class's; L1's step then shrinks the weights by
    lr·λ₁ scaled as the row scales a gradient (step_scale), to exactly 0 where it would cross."""
    cfg = TrainConfig(optimizer=name, lr=0.03, weight_decay=0.05, l1=5.0)
    ours, theirs = MLP(3, [5], 2, seed=1), MLP(3, [5], 2, seed=1)
    stepper, reference = Stepper(ours, cfg), make_optimizer(theirs, replace(cfg, l1=0.0), fused=True)
    for p, q in zip(ours.parameters(), theirs.parameters(), strict=True):
        q.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel()))
        p.grad.copy_(q.grad)
    stepper.step(0.03)
    reference.step()
    scale = OPTIMIZERS[name].step_scale
    threshold = 0.03 * 5.0 * (scale(stepper.groups[0]) if scale else torch.ones(stepper.groups[0].flat.shape))
    moved = theirs.layers[0].weight.detach().flatten()
    expected = torch.sign(moved) * torch.clamp(moved.abs() - threshold[: moved.numel()], min=0)
    torch.testing.assert_close(ours.layers[0].weight.detach().flatten(), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours.layers[0].bias, theirs.layers[0].bias)  # biases: no L1
    assert (ours.layers[0].weight == 0).any()  # some landed on exactly 0


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_run_on_the_fast_path_is_the_torch_paths_with_every_regulariser(name):
    X, y = make_2d("spiral", 240, noise=0.1, classes=3, seed=0)
    train, val = split(X, y, 0.2, seed=0)
    cfg = TrainConfig(
        optimizer=name, lr=0.01, batch_size=48, weight_decay=0.01, l1=0.001, l2=0.002, grad_clip=0.5
    )
    runs = []
    for fast in (True, False):
        trainer = Trainer(MLP(2, [16, 16], 3, "tanh", seed=3), train, val, replace(cfg, fast_path=fast))
        trainer.run_steps(40)
        runs.append(trainer)
    assert [t.path.name for t in runs] == ["numpy", "torch"]
    for p, q in zip(runs[0].model.parameters(), runs[1].model.parameters(), strict=True):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-4, atol=1e-5)
    assert runs[0].history.epochs[-1].train_loss < runs[0].history.epochs[0].train_loss * 1.5


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_the_pages_links_and_settings_offer_it_with_what_it_reads(name):
    row = OPTIMIZERS[name]
    spec = SPECS["optimizer"]
    assert name in spec.choices and spec.names[name] == row.label and row.help in spec.help
    assert from_query(to_query(Settings(optimizer=name)))[0].optimizer == name
    assert uses_momentum(name) == ("momentum" in row.reads)
    assert set(row.reads) <= set(TrainConfig.__dataclass_fields__) - {"lr", "weight_decay"}


def test_an_optimizer_the_table_lacks_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="choose one of sgd, momentum"):
        optimizer("no-such-optimizer")
    with pytest.raises(ValueError, match="Unknown optimizer"):
        TrainConfig(optimizer="no-such-optimizer")
    assert np.all([isinstance(o.label, str) and o.help.endswith(".") for o in OPTIMIZERS.values()])


def test_rmsprop_divides_the_step_by_the_root_of_its_running_mean_square():
    group, _ = twin_groups(3, decay=0.0)
    before = group.flat.clone()
    group.grad.copy_(torch.tensor([1.0, -2.0, 0.5]))
    OPTIMIZERS["rmsprop"].numpy_step(group, group.flat.numpy(), group.grad.numpy(), 0.01, TrainConfig())
    np.testing.assert_allclose(
        (before - group.flat).numpy(), 0.01 * np.sign([1.0, -2.0, 0.5]) / 0.1, rtol=1e-5
    )
