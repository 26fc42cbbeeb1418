"""mlp.train.fastpath.choice: a small run on the CPU steps in NumPy by itself, with autograd's results.

The oracle is the torch path (fast_path=False: autograd, clip_grad_norm_, torch.optim's kernels):
over a run, both give the same history and the same weights within float32 tolerance, for every
activation, optimizer, schedule, clipping, weight decay, L1, L2, dropout, both losses, full batch
and minibatches. Anything the NumPy path can't take falls back to torch, with the reason kept.
"""

import logging
from dataclasses import replace

import numpy as np
import pytest
import torch
from torch.optim.adam import adam
from torch.optim.adamw import adamw

from mlp.data import make_2d, split
from mlp.model import ACTIVATIONS, MLP
from mlp.train import (
    OPTIMIZERS,
    TrainConfig,
    Trainer,
    fit,
    optimizers,
    predict_outputs,
    predict_proba,
)
from mlp.train import adam as kernel
from mlp.train.fastpath import columns
from mlp.train.fastpath import step as numpy_path
from mlp.train.fastpath.choice import (
    MAX_MULTIPLY_ADDS,
    describe_path,
    multiply_adds,
    numpy_inference,
    path_problem,
    switch_path,
)
from mlp.train.fastpath.columns import numpy_outputs
from mlp.train.optimizers import FUSED_ADAM_FROM

RTOL, ATOL = 1e-4, 1e-5  # float32 arithmetic in another order, over a run of 60 steps


def data(n=240, classes=3, regress=False, seed=0):
    X, y = make_2d("spiral", n, noise=0.1, classes=classes, seed=seed)
    if regress:
        y = (X[:, 0] * X[:, 1]).astype(np.float32)  # a real-valued target
    return split(X, y, 0.2, seed=seed)


def both_paths(cfg, activation="relu", hidden=(16, 16), regress=False, steps=60, dropout=0.0):
    """(numpy trainer, torch trainer) after `steps` steps each from the same initial weights."""
    train, val = data(regress=regress)
    trainers = []
    for fast in (True, False):
        model = MLP(2, list(hidden), 1 if regress else 3, activation, dropout=dropout, seed=3)
        trainer = Trainer(model, train, val, replace(cfg, fast_path=fast, device="cpu", epochs=1000))
        trainer.run_steps(steps)
        trainers.append(trainer)
    assert [t.path.name for t in trainers] == ["numpy", "torch"]
    return trainers


def assert_same_run(fast, slow):
    for record in ("train_loss", "train_acc", "val_loss", "val_acc", "lr", "step"):
        ours = np.array([getattr(e, record) for e in fast.history.epochs], dtype=float)
        theirs = np.array([getattr(e, record) for e in slow.history.epochs], dtype=float)
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL, err_msg=record)
    assert len(fast.history.epochs) > 0 and fast.step_count == slow.step_count
    for p, q in zip(fast.model.parameters(), slow.model.parameters(), strict=True):
        torch.testing.assert_close(p.detach(), q.detach(), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
def test_every_activation_and_optimizer_trains_as_autograd_does(activation, optimizer):
    lr = 0.05 if optimizer in ("sgd", "momentum", "nesterov") else 0.01
    cfg = TrainConfig(optimizer=optimizer, lr=lr, batch_size=48, momentum=0.8)
    assert_same_run(*both_paths(cfg, activation))


@pytest.mark.parametrize(
    "change",
    [
        dict(scheduler="step", step_epochs=2),
        dict(scheduler="cosine", warmup_epochs=2, min_lr_ratio=0.1),
        dict(grad_clip=0.05),
        dict(weight_decay=0.01),
        dict(l1=0.002),
        dict(l2=0.003),
        dict(l1=0.001, l2=0.002, weight_decay=0.01, grad_clip=0.5, scheduler="cosine", warmup_epochs=1),
        dict(batch_size=1000),  # full batch: every step closes an epoch
    ],
)
@pytest.mark.parametrize("optimizer", ["nesterov", "adam", "adamw"])
def test_schedules_clipping_decay_and_penalties_match(change, optimizer):
    cfg = replace(TrainConfig(optimizer=optimizer, lr=0.02, batch_size=64), **change)
    assert_same_run(*both_paths(cfg, "tanh"))


@pytest.mark.parametrize("batch_size", [32, 1000])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_the_mse_loss_of_a_regression_matches(batch_size, optimizer):
    cfg = TrainConfig(optimizer=optimizer, lr=0.01, batch_size=batch_size, loss="mse", l2=0.001)
    assert_same_run(*both_paths(cfg, "gelu", regress=True))


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("batch_size", [48, 1000])
def test_dropout_draws_autograds_masks_and_trains_as_autograd_does(activation, batch_size):
    cfg = TrainConfig(optimizer="adam", lr=0.01, batch_size=batch_size)
    fast, slow = both_paths(cfg, activation, hidden=(16, 8, 12), dropout=0.3)
    assert_same_run(fast, slow)
    # The masks came from each run's own generator, in the same order: both are at the same draw
    assert torch.equal(fast.model.generator.get_state(), slow.model.generator.get_state())


@pytest.mark.parametrize(
    "change",
    [
        {},
        dict(weight_decay=0.01, grad_clip=0.5, scheduler="cosine"),
        dict(weight_decay=0.01, scheduler="step", step_epochs=2),
        dict(batch_size=1000),
        dict(l1=0.001, weight_decay=0.01),  # L1's proximal step reads the kernel's count and moments
        dict(l1=0.001, l2=0.002, weight_decay=0.01, grad_clip=0.5, scheduler="cosine", warmup_epochs=1),
        dict(dropout=0.3),
        dict(loss="mse", l2=0.001),
    ],
)
@pytest.mark.parametrize("optimizer", ["adam", "adamw"])
def test_a_wider_nets_adam_takes_torchs_fused_kernel_on_the_numpy_path(change, optimizer, monkeypatch):
    """2-96-96-3 has 9,891 parameters: its weights' group steps with the torch path's own kernel
    on the NumPy path too, and a group below the bound (the biases, under decay) in NumPy."""
    kernel_calls = []

    def counted(params, *args):
        kernel_calls.append(params[0].numel())
        kernel.adam_update(params, *args)

    monkeypatch.setattr(optimizers, "adam_update", counted)
    # lr 0.002: Adam divides each gradient by its own size, so one that is ~0 in float32 rounding
    # moves its weight by up to lr either way; among 10 k weights a few do, by ~lr / 1000.
    change = dict(change)
    dropout, regress = change.pop("dropout", 0.0), change.get("loss") == "mse"
    cfg = replace(TrainConfig(optimizer=optimizer, lr=0.002, batch_size=64), **change)
    fast, slow = both_paths(cfg, hidden=(96, 96), dropout=dropout, regress=regress)
    assert_same_run(fast, slow)
    sizes = [g.flat.numel() for g in fast.stepper.groups]
    assert len(kernel_calls) == 60 * sum(n >= FUSED_ADAM_FROM for n in sizes) > 0  # every step, the big group
    assert all(n >= FUSED_ADAM_FROM for n in kernel_calls)
    assert min(sizes) < FUSED_ADAM_FROM or len(sizes) == 1  # with decay the biases stay in NumPy
    assert [float(g.steps[0]) for g in fast.stepper.groups] == [60.0] * len(sizes)  # Adam's bias correction


def flat_adam_state(seed):
    """(params, grads, exp_avgs, exp_avg_sqs, steps) of one flat group, as a Stepper's."""
    g = torch.Generator().manual_seed(seed)
    p, grad = torch.randn(5000, generator=g), torch.randn(5000, generator=g)
    return [p], [grad], [torch.zeros(5000)], [torch.zeros(5000)], [torch.zeros(())]


@pytest.mark.parametrize("decoupled", [False, True])
def test_the_direct_kernel_call_is_torchs_public_fused_adam(decoupled, monkeypatch):
    monkeypatch.setattr(kernel, "_direct", True)
    ours, theirs = flat_adam_state(0), flat_adam_state(0)
    public = adamw if decoupled else adam
    for t in range(5):
        ours[1][0].copy_(torch.randn(5000, generator=torch.Generator().manual_seed(t)))
        theirs[1][0].copy_(ours[1][0])
        kernel.adam_update(*ours, lr=0.01, weight_decay=0.1, decoupled=decoupled)
        public(
            *theirs[:4],
            [],
            theirs[4],
            fused=True,
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=0.01,
            weight_decay=0.1,
            eps=1e-8,
            maximize=False,
        )
    assert kernel._direct
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a[0], b[0])  # the very same kernel: the same bits
    assert float(ours[4][0]) == 5.0


@pytest.mark.parametrize("broken", ["missing", "signature"])
def test_a_torch_without_the_direct_kernel_falls_back_once_to_the_public_function(
    broken, monkeypatch, caplog
):
    """A torch whose op is renamed, or takes new arguments: the op's name is patched, not torch's
    op itself (the public function calls that)."""

    def changed_op(*args, **kwargs):
        raise TypeError("_fused_adam_() got an unexpected keyword argument 'amsgrad'")

    monkeypatch.setattr(kernel, "_direct", True)
    monkeypatch.setitem(kernel.OPS, False, "_fused_adam_renamed" if broken == "missing" else "_changed_op")
    monkeypatch.setattr(torch, "_changed_op", changed_op, raising=False)
    ours, theirs = flat_adam_state(1), flat_adam_state(1)
    with caplog.at_level(logging.WARNING, logger="mlp.train.adam"):
        kernel.adam_update(*ours, lr=0.01, weight_decay=0.0, decoupled=False)
        kernel.adam_update(*ours, lr=0.01, weight_decay=0.0, decoupled=False)
    assert [r.getMessage().count("public function") for r in caplog.records] == [1]  # said once
    for _ in range(2):
        adam(
            *theirs[:4],
            [],
            theirs[4],
            fused=True,
            amsgrad=False,
            beta1=0.9,
            beta2=0.999,
            lr=0.01,
            weight_decay=0.0,
            eps=1e-8,
            maximize=False,
        )
    assert not kernel._direct
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a[0], b[0])
    assert float(ours[4][0]) == 2.0  # the failed direct call's step count was put back


def test_the_kernels_own_error_is_raised_with_the_step_count_put_back(monkeypatch):
    monkeypatch.setattr(kernel, "_direct", True)
    params, grads, m, v, steps = flat_adam_state(2)
    with pytest.raises(RuntimeError, match="Float"):  # a float64 gradient: the kernel refuses it
        kernel.adam_update(
            params, [grads[0].double()], m, v, steps, lr=0.01, weight_decay=0.0, decoupled=False
        )
    assert float(steps[0]) == 0.0 and kernel._direct  # nothing stepped, and the op is still used


def test_a_deeper_net_and_the_sgd_first_momentum_step_match():
    cfg = TrainConfig(optimizer="momentum", lr=0.05, batch_size=100, weight_decay=0.001)
    assert_same_run(*both_paths(cfg, "leaky_relu", hidden=(8, 24, 8, 4)))


def test_fit_takes_the_numpy_path_by_itself_and_the_torch_path_can_take_over():
    train, val = data()
    model = MLP(2, [32, 32], 3, seed=0)
    trainer = Trainer(model, train, val, TrainConfig(lr=0.01, batch_size=1000, epochs=5, device="cpu"))
    assert (trainer.path.name, trainer.path.reason) == ("numpy", "")
    trainer.run_steps(3)
    trainer.reconfigure(replace(trainer.cfg, fast_path=False))  # Adam's moments go with the stepper
    assert trainer.path.name == "torch"
    history = fit(MLP(2, [32, 32], 3, seed=0), train, val, TrainConfig(lr=0.01, epochs=5, device="cpu"))
    assert len(history.epochs) == 5 and history.epochs[-1].train_loss < history.epochs[0].train_loss
    assert "NumPy" in describe_path(trainer.__class__(model, train, val, TrainConfig(device="cpu")))


@pytest.mark.parametrize(
    "model, cfg, device, reason",
    [
        (MLP(2, [16], 3), TrainConfig(), "cuda", "CUDA"),
        (MLP(2, [16], 3), TrainConfig(), "mps", "MPS"),
        (MLP(784, [512, 512], 10), TrainConfig(batch_size=128), "cpu", "multiply-adds"),
        (MLP(2, [16], 3), TrainConfig(fast_path=False), "cpu", "engines are compared"),
        (MLP(2, [16], 3), TrainConfig(engine="manual"), "cpu", "manual engine"),
        (MLP(2, [16], 3), TrainConfig(amp=True), "cpu", "mixed precision"),
        (MLP(2, [16], 3).double(), TrainConfig(), "cpu", "float32"),
        (torch.nn.Sequential(torch.nn.Linear(2, 3)), TrainConfig(), "cpu", "mlp.model.MLP"),
    ],
)
def test_what_the_numpy_path_cannot_take_falls_back_to_torch_with_its_reason(model, cfg, device, reason):
    problem = path_problem(model, cfg, torch.device(device), cfg.batch_size)
    assert problem is not None and reason in problem


def test_the_size_bound_takes_the_playground_default_and_mnists():
    assert multiply_adds([2, 32, 32, 3], 480) * 4 < MAX_MULTIPLY_ADDS
    assert path_problem(MLP(2, [32, 32], 3), TrainConfig(), torch.device("cpu"), 480) is None
    mnist = MLP(784, [128], 10)  # the MNIST page's default network, at its batch sizes
    assert all(path_problem(mnist, TrainConfig(), torch.device("cpu"), b) is None for b in (64, 128))
    assert path_problem(MLP(2, [32, 32], 3, dropout=0.2), TrainConfig(), torch.device("cpu"), 480) is None


def test_comparing_engines_trains_the_autograd_side_with_autograd_itself():
    from mlp.lessons.playground import Settings, make_points
    from mlp.runs.playground import Playground

    settings = Settings()
    run = Playground(settings, make_points(settings))
    assert run.trainer.path.name == "numpy"
    run.compare(True)
    assert run.trainer.path.name == "torch" and "compared" in describe_path(run.trainer)
    assert run.twin.cfg.engine == "manual"
    run.run(20)
    assert run.view.engine_gap()["weights"] < 1e-4
    run.apply(replace(settings, lr=settings.lr / 2))  # new settings keep comparing
    assert run.trainer.path.name == "torch"
    run.compare(False)
    assert run.trainer.path.name == "numpy"


def test_uint8_images_train_on_the_numpy_path_as_on_torch(monkeypatch):

    g = torch.Generator().manual_seed(0)
    X = torch.randint(0, 256, (200, 8, 8), dtype=torch.uint8, generator=g)
    y = torch.randint(0, 4, (200,), generator=g)
    trainers = []
    for fast in (True, False):
        cfg = TrainConfig(lr=0.01, batch_size=50, epochs=3, device="cpu", fast_path=fast)
        trainer = Trainer(MLP(64, [16], 4, seed=1), (X[:150], y[:150]), (X[150:], y[150:]), cfg)
        trainer.fit()
        trainers.append(trainer)
    assert_same_run(*trainers)
    monkeypatch.setattr(numpy_path, "MAX_KEPT_INPUTS", 10)  # a large test set: torch evaluates it
    fast = Trainer(MLP(64, [16], 4, seed=1), (X[:150], y[:150]), (X[150:], y[150:]), trainers[1].cfg)
    switch_path(fast, fast_path=True)
    fast.fit()
    assert fast.path.name == "numpy" and fast.path._val is None
    assert_same_run(fast, trainers[1])


# --- inference: the plane's outputs -------------------------------------------------------


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("softmax", [True, False])
def test_numpy_outputs_are_predict_outputs_and_their_softmax(activation, softmax):
    model = MLP(2, [32, 32], 3, activation, dropout=0.3, seed=1)  # eval mode: dropout off
    x = np.random.default_rng(0).normal(scale=3, size=(5000, 2)).astype(np.float32)
    ours = numpy_outputs(model, np.ascontiguousarray(x.T), softmax)
    predict = predict_proba if softmax else predict_outputs
    theirs = predict(model, x).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
    assert model.training  # predict_outputs's eval mode toggles back; numpy_outputs never touches it


def test_a_result_of_numpy_outputs_is_its_own_even_when_the_buffers_are_busy():
    model, other = MLP(2, [8], 2, seed=0), MLP(2, [8], 2, seed=1)
    x = np.random.default_rng(0).normal(size=(2, 100)).astype(np.float32)
    first = numpy_outputs(model, x).copy()
    kept = numpy_outputs(model, x)
    numpy_outputs(other, x)  # the same buffers, other numbers
    np.testing.assert_array_equal(kept, first)
    with columns._lender.lend():  # another thread's frame holds them: fresh arrays, same numbers
        np.testing.assert_array_equal(numpy_outputs(model, x), first)


@pytest.mark.parametrize("task", ["classify", "regress"])
def test_the_plane_is_the_same_on_either_inference_path(task):
    from mlp.runs.playground_view import PlaneGrid, plane_outputs

    grid = PlaneGrid((-2.0, 2.0, -1.0, 3.0), 40, features=("x1sq", "x1x2"))
    outputs = 1 if task == "regress" else 4
    model = MLP(grid.inputs.shape[1], [16, 16], outputs, "tanh", seed=2)
    assert numpy_inference(model)
    ours = plane_outputs(model, grid, task, set_eval=False)
    assert not numpy_inference(model.double())  # float64 weights: torch computes the plane
    theirs = plane_outputs(model, grid, task, set_eval=False)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert ours.shape == (40 * 40, outputs)


@pytest.mark.parametrize(
    "change, path",
    [({}, "numpy"), ({"hidden": (512, 512), "batch_size": 512}, "torch"), ({"batch_size": 64}, "numpy")],
)
def test_the_mnist_page_says_which_path_its_run_takes(change, path):
    from mlp.data import load_sample
    from mlp.lessons.mnist import MnistSettings
    from mlp.runs.mnist import MnistRun

    settings = replace(MnistSettings(device="cpu"), **change)
    said = settings.describe_steps(torch.device("cpu"))
    run = MnistRun(load_sample(), settings)
    assert run.trainer.path.name == path and said == describe_path(run.trainer)
    assert ("NumPy" in said) == (path == "numpy")
