"""What the lesson checks: each step's sanity, and the manual gradients against autograd
(the oracle) and central finite differences (the referee), in float64."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from mlp.gradcheck import Comparison, FiniteDifference, autograd_grads, compare_grads, finite_differences
from mlp.lessons.forward_backward import Walkthrough
from mlp.links.format import loss_text
from mlp.manual import NEW, Step, forward_backward


@dataclass(frozen=True)
class Check:
    """One sanity check of a step's values, passed, failed or only a note."""

    label: str
    ok: bool | None  # None: a note worth reading, not a pass/fail test
    detail: str


def step_checks(lesson: Walkthrough, step: Step) -> list[Check]:
    """The sanity checks that apply to one step."""
    value = np.asarray(step.value.cpu() if torch.is_tensor(step.value) else step.value, dtype=np.float64)
    checks = [Check("finite", bool(np.isfinite(value).all()), "no NaN or infinity")]
    if step.op == "softmax":
        worst = float(np.max(np.abs(value.sum(axis=1) - 1)))
        checks.append(Check("rows sum to 1", worst < 1e-5, f"max |row sum − 1| = {worst:.1e}"))
        checks.append(Check("probabilities in [0, 1]", bool((value >= 0).all() and (value <= 1).all()), ""))
    if step.op == "relu":
        dead = float(np.mean(np.all(value == 0, axis=0)))
        checks.append(Check("outputs ≥ 0", bool((value >= 0).all()), f"min = {value.min():.3g}"))
        dead_text = f"{dead:.0%} of the {value.shape[1]} units output 0 for every example"
        checks.append(Check("dead units", None, dead_text))
    if step.op == "cross_entropy":
        k = lesson.widths[-1]
        uniform = f"a network guessing uniformly scores ln {k} = {math.log(k):.4f}"
        checks.append(Check("compare with ln K", None, f"loss = {loss_text(float(value))}; {uniform}"))
    if step.op == "dlogits":
        worst = float(np.max(np.abs(value.sum(axis=1))))
        checks.append(
            Check("rows sum to 0", worst < 1e-6, f"P and Y rows both sum to 1; max |row sum| = {worst:.1e}")
        )
    if step.op == "sgd_update":
        checks.append(_against_torch_sgd(lesson, step))
    if step.name == "loss" + NEW:
        before, after = lesson.result.loss, float(value)
        why = "one small step against the gradient lowers the loss" if after < before else ""
        if after >= before:
            why = "a broken gradient points the wrong way" if lesson.cfg.break_grad else "lr too large?"
        checks.append(
            Check("the loss went down", after < before, f"{loss_text(before)} → {loss_text(after)}: {why}")
        )
    if step.op in ("weight_grad", "bias_grad"):
        param = f"{'W' if step.op == 'weight_grad' else 'b'}{step.layer}"
        expected = tuple(np.shape(lesson.result.tensors[param]))
        checks.append(
            Check(f"same shape as {param}", value.shape == expected, f"{value.shape} vs {expected}")
        )
    return checks


def _against_torch_sgd(lesson: Walkthrough, step: Step) -> Check:
    """The update by hand against PyTorch's own optimizer: torch.optim.SGD, one step, same lr."""
    param, grad = (
        torch.as_tensor(_np(lesson.result.tensors[name]), dtype=torch.float64) for name in step.inputs
    )
    param = param.clone().requires_grad_(True)
    param.grad = grad
    torch.optim.SGD([param], lr=lesson.cfg.lr).step()
    ours = torch.as_tensor(_np(step.value), dtype=torch.float64)
    diff = float((ours - param.detach()).abs().max())
    return Check(
        "same as torch.optim.SGD",
        diff < 1e-5,
        f"one step with lr = {lesson.cfg.lr:g}; max |difference| = {diff:.1e}",
    )


FD_TOLERANCE = 1e-4  # relative error that a central difference in float64 comfortably beats


@dataclass
class GradientReport:
    """The manual gradients checked against autograd and against finite differences."""

    against_autograd: list[Comparison]
    finite_diffs: list[FiniteDifference]
    autograd_loss: float

    @property
    def ok(self) -> bool:
        return all(c.close for c in self.against_autograd) and all(
            f.rel_error < FD_TOLERANCE for f in self.finite_diffs
        )

    def verdict(self) -> tuple[bool, str]:
        """(all passed, the sentence that says so or names what failed)."""
        if self.ok:
            return (
                True,
                "Every manual gradient matches PyTorch autograd and central finite differences (float64).",
            )
        bad = [c.name for c in self.against_autograd if not c.close]
        return False, (
            f"{', '.join(bad) or 'Some gradients'} disagree with autograd. "
            "Everything above the broken step is still right: the error enters at dz and flows down."
        )

    def autograd_rows(self) -> list[dict]:
        """One row per gradient: pass/FAIL, shape, exactness and the largest difference."""
        return [
            {
                "gradient": c.name,
                "status": "pass" if c.close else "FAIL",
                "shape matches": c.shape_ok,
                "bit-exact": c.exact,
                "max |manual − autograd|": f"{c.max_diff:.2e}",
            }
            for c in self.against_autograd
        ]

    def finite_difference_rows(self) -> list[dict]:
        """One row per sampled entry: the manual gradient against the central difference."""
        return [
            {
                "parameter": f.name,
                "entry": str(f.index),
                "status": "pass" if f.rel_error < FD_TOLERANCE else "FAIL",
                "manual": f"{f.analytic:.6g}",
                "finite difference": f"{f.numeric:.6g}",
                "relative error": f"{f.rel_error:.1e}",
            }
            for f in self.finite_diffs
        ]


def gradient_report(lesson: Walkthrough, per_param: int = 3) -> GradientReport:
    """The lesson's manual gradients against autograd and central differences, in float64.

    The manual pass is rerun in float64 (with the same break toggle) so the comparison measures
    the math, not float32 rounding.
    """
    cfg = lesson.cfg
    params = [
        (np.asarray(W, dtype=np.float64), np.asarray(b, dtype=np.float64)) for W, b in _params_np(lesson)
    ]
    X, y = lesson.batch.X.astype(np.float64), lesson.batch.y
    manual = forward_backward(params, X, y, cfg.activation, break_grad=cfg.break_grad)
    loss, reference = autograd_grads(params, X, y, cfg.activation)
    rows = compare_grads(manual.grads, reference, atol=1e-10, rtol=1e-7)
    fd = finite_differences(
        params, X, y, cfg.activation, grads=manual.grads, per_param=per_param, seed=cfg.seed
    )
    return GradientReport(rows, fd, loss)


def _params_np(lesson: Walkthrough) -> list[tuple[np.ndarray, np.ndarray]]:
    t = lesson.result.tensors
    L = len(lesson.widths) - 1
    return [(_np(t[f"W{l}"]), _np(t[f"b{l}"])) for l in range(1, L + 1)]


def _np(x) -> np.ndarray:
    return x.detach().cpu().numpy() if torch.is_tensor(x) else np.asarray(x)
