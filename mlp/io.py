"""Saving and loading trained models: safetensors weights with the architecture inside.

Never pickle: a safetensors file holds only tensors and a JSON header, so a file from a
stranger can't run code. The architecture rides in the header's metadata (and is offered as
a separate JSON for people to read); loading checks both before touching a weight.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import fields
from itertools import pairwise
from typing import Any

import torch
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors

from mlp.activations import ACTIVATIONS
from mlp.errors import InputError
from mlp.model import INITS, MAX_HIDDEN_LAYERS, MLP, ModelConfig

FORMAT = "mlp-playground/1"
MAX_HEADER = 1 << 20  # a real header is a few KB; refuse absurd ones before parsing
DTYPES = ("F64", "F32", "F16", "BF16")  # safetensors' names of the number types a weight may have


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


def read_header(data: bytes) -> dict[str, Any]:
    """The JSON header of a safetensors buffer (u64 little-endian length, then JSON), unchecked."""
    if len(data) < 8:
        raise ValueError("This is not a safetensors model file: it is too short.")
    (length,) = struct.unpack("<Q", data[:8])
    if not 2 <= length <= min(MAX_HEADER, len(data) - 8):
        raise ValueError("This is not a safetensors model file: its header is missing or damaged.")
    try:
        header = json.loads(data[8 : 8 + length])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ValueError("This is not a safetensors model file: its header is not JSON.") from None
    if not isinstance(header, dict):
        raise ValueError("This is not a safetensors model file: its header is not a JSON object.")
    return header


def read_metadata(data: bytes) -> dict[str, str]:
    """The __metadata__ of a safetensors buffer."""
    metadata = read_header(data).get("__metadata__") or {}
    return metadata if isinstance(metadata, dict) else {}


def read_architecture(text: str) -> tuple[ModelConfig, dict[str, Any]]:
    """The ModelConfig an architecture JSON declares, checked before anything is allocated.

    Widths must be whole numbers in the model's limits (JSON like 1e400 or 16.5 is refused).
    """
    try:
        info = json.loads(text, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, RecursionError, ValueError):
        raise ValueError("The architecture is not valid JSON.") from None
    model = info.get("model") if isinstance(info, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("hidden", []), list):
        raise ValueError("The architecture is not one this app wrote (no model description).")
    widths = [model.get("d_in"), *model.get("hidden", []), model.get("d_out", 2)]
    if not all(isinstance(w, int) and not isinstance(w, bool) for w in widths):
        raise ValueError("The architecture's layer widths must be whole numbers.")
    if (depth := len(widths) - 2) > MAX_HIDDEN_LAYERS:
        raise ValueError(f"The architecture has {depth} hidden layers; at most {MAX_HIDDEN_LAYERS}.")
    for name, allowed in (("activation", ACTIVATIONS), ("init", INITS)):
        if name in model and model[name] not in allowed:
            sentence = f"The architecture asks for the {name} {{}}; this app has {', '.join(allowed)}."
            raise InputError(sentence, str(model[name])[:40])
    if unknown := sorted(set(model) - {f.name for f in fields(ModelConfig)}, key=str):
        raise InputError("The architecture has a setting this app doesn't know: {}.", unknown[0][:40])
    try:
        config = ModelConfig(**model)
    except TypeError:  # a setting of the wrong kind, e.g. a list for the dropout
        raise ValueError("The architecture is not one this app wrote: a setting's type is wrong.") from None
    return config, info


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a model file may hold")


def parameter_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """The state_dict's names and shapes for `config`, computed without building the model."""
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (n_in, n_out) in enumerate(pairwise(config.widths)):
        shapes[f"layers.{i}.weight"] = (n_out, n_in)
        shapes[f"layers.{i}.bias"] = (n_out,)
    return shapes


def max_file_bytes(config: ModelConfig) -> int:
    """The largest file model_to_bytes writes for `config` that model_from_bytes takes back:
    float32 weights, and a header as long as it reads (the architecture and training record
    need a few KB of the 1 MiB it allows)."""
    weights = 4 * sum(math.prod(shape) for shape in parameter_shapes(config).values())
    return 8 + MAX_HEADER + weights


def _check_tensors_fit(header: dict[str, Any], config: ModelConfig) -> None:
    """The file's tensors (names, shapes, number types) are exactly what `config` needs."""
    expected = parameter_shapes(config)
    found = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict) or entry.get("dtype") not in DTYPES:
            raise InputError("The tensor {} is not stored as floating-point numbers.", name[:60])
        shape = entry.get("shape")
        if not isinstance(shape, list) or not all(isinstance(n, int) for n in shape):
            raise InputError("The tensor {} has no readable shape.", name[:60])
        found[name] = tuple(shape)
    if expected != found:  # the names said are this app's own, except an extra tensor's
        missing = sorted(set(expected) - set(found))
        wrong = sorted(n for n in set(expected) & set(found) if expected[n] != found[n])
        if not missing and not wrong:
            extra = sorted(set(found) - set(expected))[0]
            raise InputError("The weights don't fit the architecture: an extra tensor, {}.", extra[:60])
        detail = f"missing {', '.join(missing)}" if missing else f"wrong shape for {', '.join(wrong)}"
        raise ValueError(f"The weights don't fit the architecture: {detail}.")


def model_from_bytes(
    data: bytes,
    architecture_text: str | None = None,
    expect_d_in: int | None = None,
    expect_d_out: int | None = None,
) -> tuple[MLP, dict[str, Any]]:
    """Rebuild an MLP from a file made by model_to_bytes; ValueError, in words, for anything else.

    The architecture comes from the file's metadata, or from `architecture_text` (the JSON).
    `expect_d_in` / `expect_d_out` refuse a model of another shape (784 and 10 for MNIST).
    Nothing is allocated before the declared architecture has been checked against the file:
    its tensors must have exactly the declared shapes, so a model is never larger than the
    file it came in (a 200-byte file can't ask for a 17 GB network).
    """
    header = read_header(data)
    metadata = header.get("__metadata__") if isinstance(header.get("__metadata__"), dict) else {}
    text = architecture_text or metadata.get("architecture")
    if not text or not isinstance(text, str):
        raise ValueError("The file has no architecture: upload the JSON that came with it too.")
    config, info = read_architecture(text)
    if expect_d_in is not None and config.d_in != expect_d_in:
        raise ValueError(f"This model takes {config.d_in} inputs; this page needs {expect_d_in}.")
    if expect_d_out is not None and config.d_out != expect_d_out:
        raise ValueError(f"This model predicts {config.d_out} classes; this page needs {expect_d_out}.")
    _check_tensors_fit(header, config)
    try:
        tensors = load_tensors(data)
    except Exception:  # safetensors' own error types, whose text may repeat the file's names
        raise ValueError("The weights could not be read: the file is damaged or cut short.") from None
    if not all(torch.isfinite(t).all() for t in tensors.values()):
        raise ValueError("The weights contain NaN or infinite values.")
    model = MLP.from_config(config)
    model.load_state_dict({name: t.float() for name, t in tensors.items()})
    return model, info
