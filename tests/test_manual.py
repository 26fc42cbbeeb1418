"""mlp.manual: every gradient against autograd, finite differences, and both array kinds."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mlp.gradcheck import autograd_grads, compare_grads, finite_differences
from mlp.manual import BACKENDS, forward_backward, op_source, train_step
from mlp.model import ACTIVATIONS, MLP


def random_problem(seed: int, dtype=torch.float64, depth: int | None = None):
    """A random batch and network: N, widths and depth all drawn from the seed."""
    rng = np.random.default_rng(seed)
    n, d_in, k = int(rng.integers(1, 17)), int(rng.integers(1, 11)), int(rng.integers(2, 7))
    depth = int(rng.integers(0, 5)) if depth is None else depth
    hidden = [int(w) for w in rng.integers(1, 13, size=depth)]
    model = MLP(d_in, hidden, k, init="xavier", seed=seed).to(dtype)
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d_in, generator=g, dtype=dtype)
    y = torch.randint(0, k, (n,), generator=g)
    return model.to_manual(), X, y


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("seed", range(12))
def test_manual_gradients_equal_autograd(activation, seed):
    params, X, y = random_problem(seed)
    result = forward_backward(params, X, y, activation)
    loss, reference = autograd_grads(params, X, y, activation)
    assert result.loss == pytest.approx(loss, rel=1e-12, abs=1e-12)
    for row in compare_grads(result.grads, reference, atol=1e-12, rtol=1e-9):
        assert row.shape_ok and row.close, row


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_training_step_is_the_recorded_pass_without_the_records(activation, backend):
    for seed in range(6):
        params, X, y = random_problem(seed)
        if backend == "numpy":
            params, X, y = [(W.numpy(), b.numpy()) for W, b in params], X.numpy(), y.numpy()
        recorded = forward_backward(params, X, y, activation)
        loss, logits, grads = train_step(params, X, y, activation)
        assert float(loss) == recorded.loss  # the same operations in the same order: bit for bit
        np.testing.assert_array_equal(np.asarray(logits), np.asarray(recorded.tensors[f"z{len(params)}"]))
        for (dW, db), (rW, rb) in zip(grads, recorded.grads, strict=True):
            np.testing.assert_array_equal(np.asarray(dW), np.asarray(rW))
            np.testing.assert_array_equal(np.asarray(db), np.asarray(rb))


@pytest.mark.parametrize("depth", [0, 1, 2, 4, 8])
def test_deep_networks_agree_with_autograd(depth):
    params, X, y = random_problem(100 + depth, depth=depth)
    result = forward_backward(params, X, y, "relu")
    _, reference = autograd_grads(params, X, y, "relu")
    for (dW, db), (rW, rb) in zip(result.grads, reference, strict=True):
        assert torch.allclose(dW, rW, rtol=1e-9, atol=1e-12)
        assert torch.allclose(db, rb, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "gelu", "relu"])
def test_gradients_match_central_finite_differences(activation):
    params, X, y = random_problem(7, depth=2)
    rows = finite_differences(params, X, y, activation, per_param=4)
    assert len(rows) == 4 * 2 * 3
    worst = max(r.rel_error for r in rows)
    assert worst < 1e-5, [r for r in rows if r.rel_error >= 1e-5]


def test_numpy_and_torch_inputs_give_the_same_numbers_in_their_own_kind():
    params, X, y = random_problem(3, depth=2)
    t = forward_backward(params, X, y, "gelu")
    n = forward_backward([(W.numpy(), b.numpy()) for W, b in params], X.numpy(), y.numpy(), "gelu")
    assert t.backend == "torch" and n.backend == "numpy"
    assert torch.is_tensor(t.probs) and isinstance(n.probs, np.ndarray)
    assert all(isinstance(s.value, np.ndarray) or np.isscalar(s.value) for s in n.steps if s.name != "loss")
    assert [s.name for s in t.steps] == [s.name for s in n.steps]
    assert t.loss == pytest.approx(n.loss, rel=1e-12)
    for ts, ns in zip(t.steps, n.steps, strict=True):
        np.testing.assert_allclose(np.asarray(ts.value), np.asarray(ns.value), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_float32_answers_in_float32(activation):
    params, X, y = random_problem(5, dtype=torch.float32, depth=1)
    t = forward_backward(params, X, y, activation)
    n = forward_backward([(W.numpy(), b.numpy()) for W, b in params], X.numpy(), y.numpy(), activation)
    assert all(s.value.dtype == torch.float32 for s in t.steps if s.name not in ("y", "loss"))
    assert all(s.value.dtype == np.float32 for s in n.steps if s.name not in ("y", "loss"))


def test_two_layer_steps_are_the_notes_in_order():
    params, X, y = random_problem(0, depth=1)
    result = forward_backward(params, X, y)
    names = [s.name for s in result.steps]
    assert names == ["z1", "a1", "z2", "probs", "loss", "Y", "dz2", "dW2", "db2", "da1", "dz1", "dW1", "db1"]
    phases = [s.phase for s in result.steps]
    assert phases == ["forward"] * 5 + ["backward"] * 8
    n, _k = result.probs.shape
    P, Y = result.tensors["probs"], result.tensors["Y"]
    assert torch.equal(result.step("dz2").value, (P - Y) / n)
    assert torch.allclose(result.step("db1").value, result.step("dz1").value.sum(0))
    assert torch.allclose(result.step("dW1").value, X.T @ result.step("dz1").value)
    assert result.step("z1").inputs == ("X", "W1", "b1")


def test_every_step_has_a_formula_code_and_the_right_gradient_shapes():
    params, X, y = random_problem(11, depth=3)
    result = forward_backward(params, X, y, "leaky_relu")
    for s in result.steps:
        assert s.formula and s.name in result.tensors
        for backend in BACKENDS:
            assert "return" in op_source(backend, s.op)
        for name in s.inputs:
            assert name in result.tensors
    for (W, b), (dW, db) in zip(params, result.grads, strict=True):
        assert dW.shape == W.shape and db.shape == b.shape


def test_softmax_rows_sum_to_one_and_relu_is_non_negative():
    params, X, y = random_problem(21, depth=2)
    result = forward_backward(params, X, y, "relu")
    assert torch.allclose(result.probs.sum(1), torch.ones(len(X), dtype=X.dtype))
    assert all((result.tensors[f"a{l}"] >= 0).all() for l in (1, 2))


def test_huge_logits_stay_finite():
    params, X, y = random_problem(4, depth=1)
    params = [(W * 1e4, b) for W, b in params]
    for p, x, labels in [(params, X, y), ([(W.numpy(), b.numpy()) for W, b in params], X.numpy(), y.numpy())]:
        result = forward_backward(p, x, labels)
        assert np.isfinite(result.loss)
        assert np.isfinite(np.asarray(result.probs)).all()
    ref = F.cross_entropy(MLP.from_manual(params)(X), y).item()
    assert forward_backward(params, X, y).loss == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p, X, y: (p, X[:, :-1], y), "Layer 1"),
        (lambda p, X, y: (p, X, y[:-1]), "one label per row"),
        (lambda p, X, y: (p, X, y + 100), "Labels must be integers"),
        (lambda p, X, y: (p, X[0], y), "2-D"),
        (lambda p, X, y: ([], X, y), "at least one"),
    ],
)
def test_bad_inputs_get_clear_messages(change, message):
    params, X, y = random_problem(2, depth=1)
    with pytest.raises(ValueError, match=message):
        forward_backward(*change(params, X, y))


def test_unknown_activation_lists_the_choices():
    params, X, y = random_problem(2, depth=1)
    with pytest.raises(ValueError, match="relu, leaky_relu, gelu, tanh, sigmoid"):
        forward_backward(params, X, y, "swish")


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("seed", range(3))
def test_mse_gradients_by_hand_equal_autograd(activation, backend, seed):
    """A regression's step: one output, MSE = (1/N) Σ (ŷ - y)², backprop from dz = 2(ŷ - y)/N."""
    rng = np.random.default_rng(seed)
    n, d_in, depth = int(rng.integers(1, 17)), int(rng.integers(1, 6)), int(rng.integers(0, 4))
    model = MLP(d_in, [int(w) for w in rng.integers(1, 9, size=depth)], 1, activation, "xavier", seed=seed)
    model = model.double()
    g = torch.Generator().manual_seed(seed)
    X, y = (
        torch.randn(n, d_in, generator=g, dtype=torch.float64),
        torch.randn(n, generator=g, dtype=torch.float64),
    )
    loss = F.mse_loss(model(X)[:, 0], y)  # PyTorch's own MSE: the mean of squares, no ½
    loss.backward()
    params = model.to_manual("numpy" if backend == "numpy" else "torch")
    inputs = (X.numpy(), y.numpy()) if backend == "numpy" else (X, y)
    manual_loss, z, grads = train_step(params, *inputs, activation, l2=0.01 * seed, loss="mse")
    l2 = 0.01 * seed * sum(float((layer.weight.detach() ** 2).sum()) for layer in model.layers)
    assert np.shape(z) == (n, 1) and abs(float(manual_loss) - (loss.item() + l2)) < 1e-12
    for (dW, db), layer in zip(grads, model.layers, strict=True):
        W = layer.weight.detach()
        expected = layer.weight.grad.T + 2 * 0.01 * seed * W.T
        assert torch.allclose(torch.as_tensor(np.asarray(dW)), expected, atol=1e-12)
        assert torch.allclose(torch.as_tensor(np.asarray(db)), layer.bias.grad, atol=1e-12)
