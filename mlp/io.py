"""Saving and loading trained models: safetensors weights with the architecture inside.

Never pickle: a safetensors file holds only tensors and a JSON header, so a file from a
stranger can't run code. The architecture rides in the header's metadata (and is offered as
a separate JSON for people to read); loading checks both before touching a weight.
"""

from __future__ import annotations

import json
import struct
from typing import Any

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from mlp.model import MLP, ModelConfig

FORMAT = "mlp-playground/1"
MAX_HEADER = 1 << 20  # a real header is a few KB; refuse absurd ones before parsing


def architecture(model: MLP, **extra: Any) -> dict[str, Any]:
    """The model's architecture and anything else worth keeping (training settings, metrics)."""
    return {"format": FORMAT, "model": model.config.to_dict(), **extra}


def architecture_json(model: MLP, **extra: Any) -> str:
    return json.dumps(architecture(model, **extra), indent=2, default=str)


def model_to_bytes(model: MLP, **extra: Any) -> bytes:
    """The weights as a safetensors file whose metadata carries the architecture JSON."""
    # Copies: a trained model's weights are views into one buffer, which safetensors refuses.
    tensors = {name: t.detach().cpu().clone() for name, t in model.state_dict().items()}
    return save_tensors(tensors, metadata={"architecture": architecture_json(model, **extra)})


def read_metadata(data: bytes) -> dict[str, str]:
    """The __metadata__ of a safetensors buffer (u64 little-endian header length, then JSON)."""
    if len(data) < 8:
        raise ValueError("This is not a safetensors model file: it is too short.")
    (length,) = struct.unpack("<Q", data[:8])
    if not 2 <= length <= min(MAX_HEADER, len(data) - 8):
        raise ValueError("This is not a safetensors model file: its header is missing or damaged.")
    try:
        header = json.loads(data[8 : 8 + length])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("This is not a safetensors model file: its header is not JSON.") from None
    if not isinstance(header, dict):
        raise ValueError("This is not a safetensors model file: its header is not a JSON object.")
    return header.get("__metadata__") or {}


def model_from_bytes(
    data: bytes,
    architecture_text: str | None = None,
    expect_d_in: int | None = None,
    expect_d_out: int | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Rebuild an MLP from a file made by model_to_bytes; ValueError, in words, for anything else.

    The architecture comes from the file's metadata, or from `architecture_text` (the JSON).
    `expect_d_in` / `expect_d_out` refuse a model of another shape (784 and 10 for MNIST).
    """
    metadata = read_metadata(data)
    text = architecture_text or metadata.get("architecture")
    if not text:
        raise ValueError("The file has no architecture: upload the JSON that came with it too.")
    try:
        info = json.loads(text)
        config = ModelConfig(**info["model"])
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise ValueError(f"The architecture is not one this app wrote ({type(err).__name__}).") from None
    if expect_d_in is not None and config.d_in != expect_d_in:
        raise ValueError(f"This model takes {config.d_in} inputs; this page needs {expect_d_in}.")
    if expect_d_out is not None and config.d_out != expect_d_out:
        raise ValueError(f"This model predicts {config.d_out} classes; this page needs {expect_d_out}.")
    try:
        tensors = load_tensors(data)
    except Exception as err:  # safetensors raises its own error types for damaged files
        raise ValueError(f"The weights could not be read: {err}") from None
    model = MLP.from_config(config)
    expected = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    found = {name: tuple(t.shape) for name, t in tensors.items()}
    if expected != found:
        missing = sorted(set(expected) - set(found))
        wrong = sorted(n for n in set(expected) & set(found) if expected[n] != found[n])
        detail = f"missing {missing}" if missing else f"wrong shape for {wrong}" if wrong else "extra tensors"
        raise ValueError(f"The weights don't fit the architecture: {detail}.")
    if not all(torch.isfinite(t).all() for t in tensors.values()):
        raise ValueError("The weights contain NaN or infinite values.")
    model.load_state_dict({name: t.float() for name, t in tensors.items()})
    return model, info
