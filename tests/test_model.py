"""mlp.model: architecture, seeded initialisation schemes, conversion to the manual form."""

import itertools
import math

import numpy as np
import pytest
import torch

from mlp.manual import forward_backward
from mlp.model import ACTIVATIONS, MLP, ModelConfig


@pytest.mark.parametrize("hidden", [[], [8], [16, 8], [4] * 8])
def test_shapes_and_parameter_count(hidden):
    model = MLP(5, hidden, 3)
    assert model(torch.randn(7, 5)).shape == (7, 3)
    widths = [5, *hidden, 3]
    assert model.n_params == sum((n_in + 1) * n_out for n_in, n_out in itertools.pairwise(widths))
    assert len(model.activations(torch.randn(2, 5))) == len(hidden) + 1


@pytest.mark.parametrize(
    ("init", "expected_std"),
    [("kaiming", math.sqrt(2 / 1000)), ("xavier", math.sqrt(2 / 1500)), ("normal", 0.02)],
)
def test_init_schemes_have_their_variance_and_zero_bias(init, expected_std):
    layer = MLP(1000, [500], 2, init=init).layers[0]
    assert layer.weight.std().item() == pytest.approx(expected_std, rel=0.02)
    assert layer.weight.mean().abs().item() < expected_std / 20
    assert torch.count_nonzero(layer.bias) == 0


def test_pytorch_init_matches_nn_linear_bounds():
    layer = MLP(400, [300], 2, init="pytorch").layers[0]
    bound = 1 / math.sqrt(400)  # kaiming_uniform(a=√5) gives U(-1/√fan_in, 1/√fan_in)
    assert layer.weight.abs().max().item() <= bound
    assert layer.weight.abs().max().item() > 0.95 * bound
    assert 0 < layer.bias.abs().max().item() <= bound


def test_same_seed_same_weights_and_the_global_rng_is_untouched():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a, b, c = MLP(4, [8], 2, seed=1), MLP(4, [8], 2, seed=1), MLP(4, [8], 2, seed=2)
    assert torch.equal(torch.rand(3), expected)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not torch.equal(a.layers[0].weight, c.layers[0].weight)
    a.reset_parameters(2)
    assert torch.equal(a.layers[0].weight, c.layers[0].weight)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_manual_conversion_round_trips_with_identical_logits(activation):
    model = MLP(6, [9, 5], 4, activation=activation, seed=3).double()
    X = torch.randn(10, 6, dtype=torch.float64)
    params = model.to_manual()
    assert params[0][0].shape == (6, 9)  # W as (in, out), the transpose of nn.Linear.weight
    assert torch.equal(MLP.from_manual(params, activation)(X), model(X))
    numpy_params = model.to_manual("numpy")
    rebuilt = MLP.from_manual(numpy_params, activation)
    assert rebuilt.layers[0].weight.dtype == torch.float64
    assert torch.equal(rebuilt(X), model(X))
    # The manual forward pass computes the same logits and hidden activations as the module.
    result = forward_backward(params, X, torch.zeros(10, dtype=torch.long), activation)
    assert torch.allclose(result.tensors["z3"], model(X), rtol=1e-12, atol=1e-12)
    assert torch.allclose(result.tensors["a1"], model.activations(X)[0], rtol=1e-12, atol=1e-12)


def test_load_manual_refuses_wrong_shapes():
    model = MLP(3, [4], 2)
    with pytest.raises(ValueError, match=r"Layer 1: expected W \(3, 4\)"):
        model.load_manual([(np.zeros((4, 3)), np.zeros(4)), (np.zeros((4, 2)), np.zeros(2))])
    with pytest.raises(ValueError, match="Expected 2"):
        model.load_manual([(np.zeros((3, 4)), np.zeros(4))])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hidden": [8, 0]}, r"hidden\[1\] must be a width between 1"),
        ({"d_in": 0}, "d_in must be a width"),
        ({"activation": "swish"}, "choose one of relu"),
        ({"init": "orthogonal"}, "choose one of kaiming"),
        ({"dropout": 1.0}, r"Dropout must be in \[0, 1\)"),
        ({"hidden": [2] * 17}, "At most 16 hidden layers"),
    ],
)
def test_bad_architectures_get_clear_messages(kwargs, message):
    args = {"d_in": 2, "hidden": [8], "d_out": 2} | kwargs
    with pytest.raises(ValueError, match=message):
        MLP(**args)


def test_config_rebuilds_the_same_model():
    model = MLP(2, [16, 16], 3, activation="tanh", init="xavier", dropout=0.1, seed=5)
    config = ModelConfig(**model.config.to_dict())
    twin = MLP.from_config(config, seed=5)
    assert twin.config == model.config
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), twin.parameters(), strict=True))


def test_dropout_is_active_only_in_training_mode():
    model = MLP(10, [64], 2, dropout=0.5)
    x = torch.randn(4, 10)
    model.eval()
    assert torch.equal(model(x), model(x))
    model.train()
    assert not torch.equal(model(x), model(x))


def test_a_server_process_keeps_numpys_blas_on_one_thread():
    import subprocess
    import sys

    code = (
        "from mlp.device import one_blas_thread; one_blas_thread(); "
        "from threadpoolctl import threadpool_info; "
        "print({i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'})"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "{1}"


@pytest.mark.slow
def test_a_fresh_processs_first_network_is_built_without_importing_sympy():
    """Weights built on the meta device and moved with `to_empty` took torch's Python reference
    path, whose first use imports SymPy: 0.7 s of a fresh server's first MNIST run (or first
    playground). The network is the same (its weights are drawn from the seed), sooner."""
    import subprocess
    import sys

    code = (
        "import sys; from mlp.model import MLP; net = MLP(784, [128], 10, seed=3); "
        "print('sympy' in sys.modules, net.layers[0].weight.sum().item(), net.layers[0].weight.device)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    here = MLP(784, [128], 10, seed=3)
    assert out == ["False", str(here.layers[0].weight.detach().sum().item()), "cpu"]
