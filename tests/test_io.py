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
