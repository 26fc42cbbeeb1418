"""mlp.gradcheck: green for correct gradients, red for a tampered one."""

import torch

from mlp.gradcheck import autograd_grads, compare_grads, finite_differences
from mlp.manual import forward_backward
from mlp.model import MLP


def problem():
    model = MLP(5, [7], 3, seed=0).double()
    g = torch.Generator().manual_seed(0)
    return model.to_manual(), torch.randn(8, 5, generator=g, dtype=torch.float64), torch.arange(8) % 3


def test_correct_gradients_are_green():
    params, X, y = problem()
    result = forward_backward(params, X, y)
    rows = compare_grads(result.grads, autograd_grads(params, X, y)[1])
    assert [r.name for r in rows] == ["dW1", "db1", "dW2", "db2"]
    assert all(r.close and r.shape_ok and r.max_diff < 1e-12 for r in rows)


def test_a_tampered_gradient_is_red_in_both_checks():
    params, X, y = problem()
    grads = forward_backward(params, X, y).grads
    dW1, db1 = grads[0]
    tampered = [(dW1 * 1.01, db1), grads[1]]
    rows = {r.name: r for r in compare_grads(tampered, autograd_grads(params, X, y)[1])}
    assert not rows["dW1"].close and rows["dW1"].max_diff > 1e-6
    assert rows["db1"].close and rows["dW2"].close
    checks = finite_differences(params, X, y, grads=tampered, per_param=3)
    assert max(c.rel_error for c in checks if c.name == "W1") > 1e-3
    assert max(c.rel_error for c in checks if c.name != "W1") < 1e-6


def test_wrong_shape_is_reported_not_raised():
    params, X, y = problem()
    grads = forward_backward(params, X, y).grads
    bad = [(grads[0][0].T, grads[0][1]), grads[1]]
    row = compare_grads(bad, autograd_grads(params, X, y)[1])[0]
    assert not row.shape_ok and not row.close


def test_finite_differences_sample_distinct_entries_never_the_same_twice():
    model = MLP(3, [2], 2, seed=0)
    X, y = torch.randn(5, 3, dtype=torch.float64), torch.tensor([0, 1, 0, 1, 1])
    rows = finite_differences(model.double().to_manual(), X, y, "relu", per_param=4)
    for name in ("W1", "b1", "W2", "b2"):
        picked = [r.index for r in rows if r.name == name]
        assert len(picked) == len(set(picked)) == min(4, {"W1": 6, "b1": 2, "W2": 4, "b2": 2}[name])
