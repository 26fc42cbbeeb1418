"""mlp.io: models to safetensors bytes and back; anything else is refused in words."""

import json
import struct

import pytest
import torch
from safetensors.torch import save as save_tensors

from mlp.io import architecture_json, model_from_bytes, model_to_bytes, read_metadata
from mlp.model import MLP


def test_round_trip_gives_identical_predictions_and_keeps_the_extras():
    model = MLP(784, [64, 32], 10, activation="gelu", init="xavier", seed=4)
    data = model_to_bytes(model, test_accuracy=0.97)
    loaded, info = model_from_bytes(data, expect_d_in=784, expect_d_out=10)
    x = torch.rand(5, 784)
    assert torch.equal(loaded(x), model(x))
    assert loaded.config == model.config and info["test_accuracy"] == 0.97
    assert json.loads(read_metadata(data)["architecture"])["model"]["hidden"] == [64, 32]


def test_the_json_alone_can_supply_the_architecture():
    model = MLP(2, [8], 3, seed=1)
    bare = save_tensors({k: v.contiguous() for k, v in model.state_dict().items()})
    with pytest.raises(ValueError, match="no architecture: upload the JSON"):
        model_from_bytes(bare)
    loaded, _ = model_from_bytes(bare, architecture_json(model))
    assert torch.equal(loaded(torch.ones(1, 2)), model(torch.ones(1, 2)))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "too short"),
        (b"not a model at all, just some text", "header is missing or damaged"),
        (struct.pack("<Q", 4) + b"{{{{", "header is not JSON"),
        (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "header is missing or damaged"),
    ],
)
def test_garbage_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        model_from_bytes(data)


def test_a_model_of_another_shape_is_refused():
    data = model_to_bytes(MLP(2, [8], 3))
    with pytest.raises(ValueError, match="takes 2 inputs; this page needs 784"):
        model_from_bytes(data, expect_d_in=784)
    with pytest.raises(ValueError, match="predicts 3 classes; this page needs 10"):
        model_from_bytes(data, expect_d_out=10)


def test_weights_that_do_not_fit_their_architecture_are_refused():
    small = MLP(2, [8], 3)
    other = MLP(2, [9], 3)
    tensors = {k: v.contiguous() for k, v in other.state_dict().items()}
    data = save_tensors(tensors, metadata={"architecture": architecture_json(small)})
    with pytest.raises(ValueError, match="wrong shape for"):
        model_from_bytes(data)
    tensors = {k: v.contiguous() for k, v in small.state_dict().items()}
    tensors["layers.0.weight"] = torch.full_like(tensors["layers.0.weight"], float("nan"))
    with pytest.raises(ValueError, match="NaN or infinite"):
        model_from_bytes(save_tensors(tensors, metadata={"architecture": architecture_json(small)}))


def test_a_truncated_file_is_refused():
    data = model_to_bytes(MLP(2, [8], 3))
    with pytest.raises(ValueError, match="could not be read"):
        model_from_bytes(data[:-10])


def _file_declaring(model: dict, tensors: dict | None = None) -> bytes:
    """A small safetensors file whose metadata declares `model` (tiny tensors unless given)."""
    tensors = tensors if tensors is not None else {"layers.0.weight": torch.zeros(2, 2)}
    return save_tensors(tensors, metadata={"architecture": json.dumps({"model": model})})


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ({"d_in": 784, "hidden": [16384], "d_out": 10}, "don't fit"),  # 3.3 s and +1.8 GB before
        ({"d_in": 784, "hidden": [65536] * 16, "d_out": 10}, "don't fit"),  # ~17 GB per layer
        ({"d_in": 784, "hidden": [65536] * 17, "d_out": 10}, "at most 16"),
        ({"d_in": 784, "hidden": [10**30], "d_out": 10}, "between 1 and"),
        ({"d_in": 784, "hidden": [16.5], "d_out": 10}, "whole numbers"),
        ({"d_in": 784, "hidden": [True], "d_out": 10}, "whole numbers"),
        ({"d_in": 784, "hidden": "128", "d_out": 10}, "not one this app wrote"),
        (
            {"d_in": 784, "hidden": [128], "d_out": 10, "activation": "[x](http://127.0.0.1:9)"},
            "the activation",
        ),
        ({"d_in": 784, "hidden": [128], "d_out": 10, "init": ["zeros"]}, "the init"),
        ({"d_in": 784, "hidden": [128], "d_out": 10, "extra": 1}, "setting this app doesn't know: 'extra'"),
        ({"d_in": 784, "hidden": [128], "d_out": 10, "dropout": [0.5]}, "a setting's type is wrong"),
    ],
)
def test_a_declared_architecture_is_checked_against_the_file_before_anything_is_built(
    declared, message, monkeypatch
):
    def never(*args, **kwargs):
        raise AssertionError("a model was built before the file was checked")

    monkeypatch.setattr(MLP, "from_config", never)
    data = _file_declaring(declared)
    assert len(data) < 1000
    with pytest.raises(ValueError, match=message):
        model_from_bytes(data, expect_d_in=784, expect_d_out=10)


@pytest.mark.parametrize("width", ["1e400", "-1e400", "NaN", "Infinity"])
def test_numbers_json_can_hold_but_a_width_cannot_are_refused_in_words(width):
    text = '{"model": {"d_in": 784, "hidden": [WIDTH], "d_out": 10}}'.replace("WIDTH", width)
    data = save_tensors({"x": torch.zeros(1)}, metadata={"architecture": text})
    with pytest.raises(ValueError, match=r"whole numbers|not valid JSON"):
        model_from_bytes(data)


def test_weights_stored_as_integers_are_refused():
    model = MLP(2, [3], 2, seed=0)
    tensors = {name: t.detach().to(torch.int32) for name, t in model.state_dict().items()}
    data = save_tensors(tensors, metadata={"architecture": architecture_json(model)})
    with pytest.raises(ValueError, match="floating-point"):
        model_from_bytes(data)


def test_the_shapes_computed_without_a_model_are_the_models_own():
    from mlp.io import parameter_shapes

    model = MLP(784, [64, 32, 16], 10, seed=0)
    assert parameter_shapes(model.config) == {n: tuple(t.shape) for n, t in model.state_dict().items()}
