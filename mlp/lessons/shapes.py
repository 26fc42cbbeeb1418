"""Each step's shape story: its operands, the operator between them, the result, and the rule in words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlp.lessons.forward_backward import Walkthrough
from mlp.links.format import loss_text
from mlp.manual import NEW, Step


@dataclass(frozen=True)
class Operand:
    """One operand of a shape story: its name in the code, its shape, its shape's symbols."""

    name: str  # as in the code: "X", "W1", "dz2"; a trailing ᵀ marks a transpose
    shape: tuple[int, ...]
    symbols: tuple[str, ...]  # ("N", "d_in")


@dataclass(frozen=True)
class ShapeStory:
    """Operands, the operator between them, the result, and what the shapes mean."""

    operands: list[Operand]
    operators: list[str]  # between consecutive operands: "@", "+", "−", "⊙", "f", "Σ rows", ...
    result: Operand
    inner: str | None  # the symbol matched by a matmul ("d_in") or summed over ("N")
    broadcast: str | None  # the operand added to every row, if any
    sentence: str  # the shape rule in words


def _operand(lesson: Walkthrough, name: str, transpose: bool = False) -> Operand:
    value = lesson.result.tensors[name]
    shape, symbols = tuple(np.shape(value)), lesson.symbols(name)
    if transpose:
        return Operand(f"{name}ᵀ", shape[::-1], symbols[::-1])
    return Operand(name, shape, symbols)


def shape_story(lesson: Walkthrough, step: Step) -> ShapeStory:
    """How the operands' shapes make the result's shape, for one step."""
    result = _operand(lesson, step.name)
    ins = step.inputs
    op = step.op
    n = result.shape[0] if result.shape else lesson.batch.X.shape[0]
    if op == "affine":
        a, W, b = (_operand(lesson, i) for i in ins)
        inner = a.symbols[1]
        sentence = (
            f"{a.name} {a.shape} @ {W.name} {W.shape}: the inner sizes ({inner} = {a.shape[1]}) must match; "
            f"each of the {n} rows of {a.name} is dotted with each of the {W.shape[1]} columns of {W.name}. "
            f"{b.name} {b.shape} is broadcast: the same row is added to all {n} rows."
        )
        return ShapeStory([a, W, b], ["@", "+"], result, inner, b.name, sentence)
    if op == "weight_grad":
        a, dz = _operand(lesson, ins[0], transpose=True), _operand(lesson, ins[1])
        sentence = (
            f"{a.name} {a.shape} @ {dz.name} {dz.shape}: the inner size is the batch (N = {dz.shape[0]}), "
            f"so this matmul sums every example's contribution into one gradient with {step.name}'s "
            f"shape {result.shape}, the shape of W{step.layer}."
        )
        return ShapeStory([a, dz], ["@"], result, "N", None, sentence)
    if op == "input_grad":
        dz, W = _operand(lesson, ins[0]), _operand(lesson, ins[1], transpose=True)
        sentence = (
            f"{dz.name} {dz.shape} @ {W.name} {W.shape}: the inner size ({dz.symbols[1]} = {dz.shape[1]}) "
            f"matches; the gradient flows back through W{step.layer} to the {result.shape[1]} units below."
        )
        return ShapeStory([dz, W], ["@"], result, dz.symbols[1], None, sentence)
    if op == "bias_grad":
        dz = _operand(lesson, ins[0])
        sentence = (
            f"Summing {dz.name} {dz.shape} over its {dz.shape[0]} rows gives {step.name} {result.shape}: "
            "the bias was added to every row, so every row's gradient flows back to it."
        )
        return ShapeStory([dz], ["Σ rows"], result, "N", None, sentence)
    if op == "softmax":
        z = _operand(lesson, ins[0])
        sentence = f"Softmax works row by row: {z.shape} in, {result.shape} out, each row now sums to 1."
        return ShapeStory([z], ["softmax"], result, None, None, sentence)
    if op == "sgd_update":
        p, g = _operand(lesson, ins[0]), _operand(lesson, ins[1])
        lr = Operand(f"lr·{g.name}", g.shape, g.symbols)  # the gradient scaled: the same shape
        sentence = (
            f"{p.name} {p.shape} − lr · {g.name} {g.shape}, element by element (lr = {lesson.cfg.lr:g}): "
            f"a gradient always has its parameter's shape, so every one of the {int(np.prod(p.shape))} "
            f"numbers of {p.name} takes a small step against its own gradient."
        )
        return ShapeStory([p, lr], ["−"], result, None, None, sentence)
    if op == "cross_entropy" and step.name == "loss" + NEW:
        z, y = _operand(lesson, ins[0]), _operand(lesson, "y")
        before, after = lesson.result.loss, float(np.asarray(step.value))
        went = "down" if after < before else "up"
        sentence = (
            f"The same batch through the network with the new parameters: logits {z.shape} again, "
            f"and the loss went {went}, from {loss_text(before)} to {loss_text(after)}."
        )
        return ShapeStory([z, y], ["with"], result, "N", None, sentence)
    if op == "cross_entropy":
        z, y = _operand(lesson, ins[0]), _operand(lesson, "y")
        sentence = (
            f"One number per example, -log P[i, y_i], averaged over the {z.shape[0]} rows into a scalar."
        )
        return ShapeStory([z, y], ["with"], result, "N", None, sentence)
    if op == "one_hot":
        y = _operand(lesson, "y")
        sentence = (
            f"Each label becomes a row of {result.shape[1]} with a single 1: {y.shape} → {result.shape}."
        )
        return ShapeStory([y], ["one-hot"], result, None, None, sentence)
    if op == "dlogits":
        P, Y = _operand(lesson, "probs"), _operand(lesson, "Y")
        sentence = (
            f"(P − Y) / N, element by element: {P.shape} − {Y.shape} → {result.shape}. "
            "Dividing by N is the mean in the loss."
        )
        return ShapeStory([P, Y], ["−"], result, None, None, sentence)
    if op == "preact_grad":
        da, z = _operand(lesson, ins[0]), _operand(lesson, ins[1])
        sentence = (
            f"Element by element: {da.name} {da.shape} ⊙ f'({z.name}) {z.shape} → {result.shape}. "
            "Where the activation was flat, the gradient stops."
        )
        return ShapeStory(
            [da, Operand(f"f'({z.name})", z.shape, z.symbols)], ["⊙"], result, None, None, sentence
        )
    z = _operand(lesson, ins[0])  # an activation
    sentence = f"Applied element by element: {z.shape} in, {result.shape} out."
    return ShapeStory([z], ["f"], result, None, None, sentence)
