"""L1 and L2 penalties: their values and gradients against autograd, L1's exact zeros, both
engines alike, the loss each curve shows, and bad rates refused."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mlp.data import make_2d, split
from mlp.lessons.playground import Settings
from mlp.manual import train_step
from mlp.model import MLP
from mlp.train import OPTIMIZERS, TrainConfig, Trainer, evaluate
from mlp.train.penalty import l1_term, l2_term, penalised, soft_threshold_, zero_count
from tests.test_manual import random_problem


def autograd_penalised(params, X, y, l1, l2):
    """Loss + λ₁Σ|W| + λ₂ΣW² and its gradients, by autograd (float64): the oracle."""
    model = MLP.from_manual(params)
    weights = penalised(model)
    loss = F.cross_entropy(model(X), y) + l1_term(weights, l1) + l2_term(weights, l2)
    loss.backward()
    return loss.item(), [(layer.weight.grad.T, layer.bias.grad) for layer in model.layers]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("l1", "l2"), [(0.01, 0.0), (0.0, 0.03), (0.3, 1.0)])
def test_the_penalties_and_their_gradients_by_hand_equal_autograd(seed, l1, l2):
    params, X, y = random_problem(seed)
    loss, _, grads = train_step(params, X, y, "relu", l1=l1, l2=l2)
    plain, _, plain_grads = train_step(params, X, y, "relu")
    weights = [W for W, _ in params]
    expected = (
        float(plain) + l1 * sum(W.abs().sum() for W in weights) + l2 * sum((W**2).sum() for W in weights)
    )
    assert float(loss) == pytest.approx(float(expected), rel=1e-12)
    ref_loss, reference = autograd_penalised(params, X, y, l1, l2)
    assert float(loss) == pytest.approx(ref_loss, rel=1e-12)
    for (dW, db), (rW, rb), (_, pb) in zip(grads, reference, plain_grads, strict=True):
        assert torch.allclose(dW, rW, rtol=1e-9, atol=1e-12) and torch.allclose(db, rb, rtol=1e-9, atol=1e-12)
        assert torch.equal(db, pb)  # biases are never penalised
    numpy_params = [(W.numpy(), b.numpy()) for W, b in params]
    np_loss, _, np_grads = train_step(numpy_params, X.numpy(), y.numpy(), "relu", l1=l1, l2=l2)
    assert float(np_loss) == pytest.approx(float(loss), rel=1e-12)
    for (dW, _), (rW, _) in zip(np_grads, grads, strict=True):
        np.testing.assert_allclose(dW, rW.numpy(), rtol=1e-9, atol=1e-12)


def test_soft_thresholding_lands_on_exactly_zero():
    w = torch.tensor([-0.5, -0.05, 0.0, 0.02, 0.3])
    soft_threshold_(w, 0.1)
    assert w.tolist() == pytest.approx([-0.4, 0.0, 0.0, 0.0, 0.2])
    assert (w[1:4] == 0).all()


def moons(n: int = 400):
    X, y = make_2d("moons", n, noise=0.15, seed=0)
    return split(X, y, 0.2, seed=0)


def run(engine: str = "autograd", **changes):
    (train, val), model = moons(), MLP(2, [8, 8], 2, seed=0)
    cfg = TrainConfig(engine=engine, optimizer="sgd", lr=0.3, batch_size=32, epochs=60, device="cpu")
    trainer = Trainer(model, train, val, TrainConfig(**(cfg.to_dict() | changes)))
    trainer.fit()
    return model, trainer


def test_one_sgd_step_is_a_gradient_step_on_the_data_and_l2_then_l1s_proximal_step():
    (train, _), model = moons(), MLP(2, [8], 2, seed=0)
    before = [p.detach().clone() for p in model.parameters()]
    X, y = (torch.as_tensor(t) for t in train)
    loss = F.cross_entropy(model(X), y) + l2_term(penalised(model), 0.1)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    cfg = TrainConfig(optimizer="sgd", lr=0.5, batch_size=len(y), epochs=1, l1=0.05, l2=0.1, device="cpu")
    Trainer(model, train, cfg=cfg).step()
    for p, p0, g in zip(model.parameters(), before, grads, strict=True):
        expected = p0 - 0.5 * g
        if p.ndim >= 2:  # w ← sign(w)·max(|w| − lr·λ₁, 0) on the weights only
            expected = torch.sign(expected) * torch.clamp_min(expected.abs() - 0.5 * 0.05, 0)
        assert torch.allclose(p.detach(), expected, atol=1e-6)


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_l1_puts_weights_at_exactly_zero_with_every_optimizer_and_l2_does_not(optimizer):
    lr = 0.3 if optimizer in ("sgd", "momentum", "nesterov") else 0.01
    sparse, _ = run(optimizer=optimizer, lr=lr, momentum=0.5, l1=0.01)
    zeros, total = zero_count(penalised(sparse))
    assert total == 96 and zeros >= 30, zeros
    assert all(
        torch.count_nonzero(layer.bias) == layer.bias.numel() for layer in sparse.layers
    )  # biases free
    assert zero_count(penalised(run(optimizer=optimizer, lr=lr, momentum=0.5, l2=0.01)[0]))[0] == 0


def test_both_engines_train_the_same_network_with_both_penalties():
    (auto, a), (manual, m) = run(l1=0.003, l2=0.001), run("manual", l1=0.003, l2=0.001)
    losses = [[e.train_loss for e in t.history.epochs] for t in (a, m)]
    assert np.allclose(*losses, rtol=0, atol=1e-5)
    for p, q in zip(auto.parameters(), manual.parameters(), strict=True):
        assert torch.allclose(p, q, atol=1e-4)
    assert zero_count(penalised(auto)) == zero_count(penalised(manual)) and zero_count(penalised(auto))[0] > 0


@pytest.mark.parametrize("engine", ["autograd", "manual"])
def test_the_train_loss_includes_the_penalty_and_the_test_loss_does_not(engine):
    (train, val), model = moons(), MLP(2, [8, 8], 2, seed=0)
    X, y = (torch.as_tensor(t) for t in train)
    with torch.no_grad():
        weights = penalised(model)
        penalised_loss = F.cross_entropy(model(X), y) + l1_term(weights, 0.1) + l2_term(weights, 0.2)
    cfg = TrainConfig(engine=engine, lr=1e-3, batch_size=len(y), epochs=1, l1=0.1, l2=0.2, device="cpu")
    trainer = Trainer(model, train, val, cfg)
    trainer.step()  # full batch: one step, one epoch, its loss at the starting weights
    record = trainer.history.epochs[-1]
    assert record.train_loss == pytest.approx(penalised_loss.item(), rel=1e-5)
    assert record.val_loss == pytest.approx(evaluate(model, *val)[0], rel=1e-6)  # the data loss alone


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"l1": -0.1}, r"l1 must be between 0 and 1000000; got -0.1"),
        ({"l2": float("nan")}, r"l2 must be a finite number; got nan"),
        ({"l2": float("inf")}, r"l2 must be a finite number; got inf"),
    ],
)
def test_bad_rates_get_clear_messages(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig(**kwargs)


def test_the_playgrounds_rates_are_refused_outside_their_stops_range():
    with pytest.raises(ValueError, match="must be between 0 and 10"):
        Settings(l1=-1.0)
    assert Settings(l1=0.01, l2=0.3).train_config(100, "classify").l1 == 0.01
