"""The activations' table (mlp/activations.py): every row agrees with itself in every form, and
everything that offers an activation offers the table's rows and nothing else.

A new row is checked here as it is added: its manual f and f' (NumPy and PyTorch) against torch's
function and autograd, its fast-path forms against the same, a model and both engines training
with it, and the pages, links and model files taking its name.
"""

import numpy as np
import pytest
import torch

from mlp.activations import ACTIVATIONS, activation
from mlp.data import make_2d
from mlp.io import model_from_bytes, model_to_bytes
from mlp.lessons.playground import SPECS, Settings, from_query, to_query
from mlp.manual import forward_backward
from mlp.model import MLP
from mlp.train import TrainConfig, fit
from mlp.train.fastpath.columns import activate, activation_grad

Z = torch.linspace(-6, 6, 241, dtype=torch.float64)  # both sides of 0, and 0 itself


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_the_manual_forms_agree_with_torch_and_autograd_in_numpy_and_torch(name):
    row = ACTIVATIONS[name]
    z = Z.clone().requires_grad_(True)
    expected = row.torch(z)
    (slope,) = torch.autograd.grad(expected.sum(), z)
    for given in (Z.clone(), Z.numpy().copy()):  # a tensor answers a tensor, an array an array
        f, grad = row.f(given), row.grad(given)
        assert type(f) is type(given) and type(grad) is type(given)
        np.testing.assert_allclose(np.asarray(f), expected.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(np.asarray(grad), slope.numpy(), atol=1e-9)
    for kind in (torch.float32, np.float32):  # and in the dtype it was given
        given = Z.to(torch.float32) if kind is torch.float32 else Z.numpy().astype(np.float32)
        assert row.f(given).dtype == given.dtype and row.grad(given).dtype == given.dtype


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_the_fast_paths_forms_agree_with_torch_on_float32_columns(name):
    z32 = Z.to(torch.float32).reshape(1, -1).clone().requires_grad_(True)
    expected = ACTIVATIONS[name].torch(z32)
    (slope,) = torch.autograd.grad(expected.sum(), z32)
    z = z32.detach().numpy().copy()
    zeros = np.zeros_like(z)
    kept = z.copy()
    a = activate(name, z, zeros)
    np.testing.assert_allclose(a, expected.detach().numpy(), atol=1e-6)
    grad = activation_grad(name, z, a, zeros, np.empty_like(z))  # z as activate left it
    np.testing.assert_allclose(np.asarray(grad, dtype=np.float32), slope.numpy(), atol=1e-5)  # float32
    assert np.array_equal(z, kept) or z is a or np.shares_memory(z, a)  # z overwritten only by a


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_a_model_and_both_engines_train_with_it(name):
    X, y = make_2d("moons", 200, noise=0.1, seed=0)
    runs = {}
    for engine in ("autograd", "manual"):
        model = MLP(2, [8], 2, activation=name, seed=0)
        cfg = TrainConfig(optimizer="adam", lr=0.01, batch_size=32, epochs=3, engine=engine, fast_path=False)
        runs[engine] = fit(model, (X, y), (X, y), cfg).epochs[-1].train_loss
    fast = fit(
        MLP(2, [8], 2, activation=name, seed=0), (X, y), (X, y), TrainConfig(lr=0.01, batch_size=32, epochs=3)
    )
    assert runs["autograd"] == pytest.approx(runs["manual"], rel=1e-4)
    assert fast.epochs[-1].train_loss == pytest.approx(runs["autograd"], rel=1e-4)
    assert name in repr(MLP(2, [3], 2, activation=name))


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_the_walk_through_links_and_model_files_take_its_name(name):
    model = MLP(2, [4], 3, activation=name, seed=1)
    X, y = torch.randn(6, 2), torch.tensor([0, 1, 2, 0, 1, 2])
    walked = forward_backward(model.to_manual(), X, y, activation=name)
    assert walked.loss == pytest.approx(torch.nn.functional.cross_entropy(model(X), y).item(), rel=1e-5)
    assert rf"f(z) = {ACTIVATIONS[name].tex}" in walked.step("a1").formula
    loaded, _ = model_from_bytes(model_to_bytes(model))
    assert loaded.config.activation == name
    settings = from_query(to_query(Settings(activation=name)))[0]
    assert settings.activation == name
    assert SPECS["activation"].names[name] == ACTIVATIONS[name].label


def test_an_activation_the_table_lacks_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="choose one of relu, leaky_relu"):
        activation("swish2")
    with pytest.raises(ValueError, match="Unknown activation"):
        MLP(2, [3], 2, activation="swish2")


def test_silu_is_z_times_its_sigmoid():
    z = np.array([-2.0, 0.0, 1.0], dtype=np.float32)
    np.testing.assert_allclose(ACTIVATIONS["silu"].f(z), [-0.2384058, 0.0, 0.7310586], rtol=1e-6)
