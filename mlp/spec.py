"""A setting's one declaration: what it may hold, how a link writes it, how a page shows it.

A settings dataclass declares each field with `setting(default, Spec(...))`: its default, and a
Spec with its range or choices, its link name, its label and help, the widget and sidebar section
that show it, and when it applies (momentum only for the optimizers that read it). TrainConfig
declares the training settings this way (mlp.train.config: the library's widest ranges), the
pages' settings narrow them (mlp.links.settings.train_setting) and declare their own; the widget,
the link, the checks and the training config all read the one declaration.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields, replace
from typing import Any

from mlp.errors import InputError

NETWORK, TRAINING = "Network", "Training"  # the sidebar's sections the shared settings come under


def number_text(value: float) -> str:
    """A limit as a person writes it: a whole number in full (2147483647, where {:g} writes
    2.14748e+09), any other number in {:g}'s short form (0.0001, 0.05)."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:g}"


@dataclass(frozen=True)
class WidthLimits:
    """How many hidden layers of how many units a page allows, and how they are written."""

    max_layers: int
    max_width: int
    min_layers: int = 1

    @property
    def help(self) -> str:
        layers = f"{self.min_layers} to {self.max_layers}"
        return f"{layers} layers of 1 to {self.max_width} units, separated by commas, e.g. 32, 32."

    def problem(self, widths: Sequence[int]) -> str | None:
        """Why these widths are not allowed here, or None."""
        if not self.min_layers <= len(widths) <= self.max_layers:
            return f"Use {self.min_layers} to {self.max_layers} hidden layers; got {len(widths)}."
        bad = [w for w in widths if not 1 <= w <= self.max_width]
        return f"Each width must be between 1 and {self.max_width}; got {bad[0]}." if bad else None

    def parse(self, text: str) -> tuple[int, ...]:
        """'256, 128' -> (256, 128); anything else is a ValueError a student can act on."""
        cleaned = text.strip().lower()
        if cleaned in ("", "none") and self.min_layers == 0:
            return ()
        parts = [p for p in re.split(r"[\s,;]+|(?<=\d)-(?=\d)", cleaned) if p]  # "32, 32" or "32-32"
        if not parts:
            raise ValueError(f"Give {self.help[0].lower()}{self.help[1:]}")
        widths = []
        for part in parts:
            if not re.fullmatch(r"-?\d{1,7}", part):
                raise InputError("{} is not a whole number; write widths like '256, 128'.", part[:20])
            widths.append(int(part))
        if problem := self.problem(widths):
            raise ValueError(problem)
        return tuple(widths)

    @staticmethod
    def text(widths: Sequence[int]) -> str:
        """(32, 32) -> '32, 32'; () -> 'none'."""
        return ", ".join(str(w) for w in widths) or "none"


@dataclass(frozen=True)
class Spec:
    """What one setting may hold, how a link writes it, and the stops its slider offers."""

    key: str  # its name in the link
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    many: bool = False  # a tuple of distinct choices (a multiselect), not one of them
    step: float | None = None  # a slider's or number input's step
    stops: tuple[float, ...] | None = None  # a select-slider's values (a link may bring one in between)
    zero_last: bool = False  # among the stops, 0 means "all" and sorts after the largest
    widths: WidthLimits | None = None  # for hidden-layer widths
    # How the sidebar shows it:
    label: str = ""
    help: str | None = None
    section: str = ""  # the sidebar's heading it comes under, in declaration order
    widget: str | None = None  # "number" or "radio" where the default widget won't do (see kind)
    names: Mapping[Any, str] | None = field(default=None, compare=False)  # how values are shown
    for_class: Any = None  # where projector mode and tours start it instead of the default: a class's pace
    # Whether it applies, given the other settings' current values (by field name): a setting that
    # doesn't is shown disabled and changes nothing (momentum for SGD). None: always.
    applies: Callable[[Mapping[str, Any]], bool] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # A link gets exactly the range the slider offers: a select-slider's range is its stops'.
        if self.stops is not None:
            object.__setattr__(self, "low", min(self.stops))
            object.__setattr__(self, "high", max(self.stops))
        if self.widths is not None and self.help is None:
            object.__setattr__(self, "help", self.widths.help)

    def like(self, **changes: Any) -> Spec:
        """This spec with some of it changed: a page's own range of a shared setting."""
        return replace(self, **changes)

    def applies_to(self, values: Mapping[str, Any]) -> bool:
        """Whether the setting applies beside these values of the others (see `applies`)."""
        return self.applies is None or bool(self.applies(values))

    @property
    def kind(self) -> str:
        """The widget that shows it: text (hidden widths), select, radio, toggle (yes or no),
        multiselect (several choices), stops (a select-slider), slider or number."""
        if self.widths is not None:
            return "text"
        if self.choices is not None and self.many:
            return "multiselect"
        if self.choices is not None:
            return self.widget or ("toggle" if set(self.choices) == {False, True} else "select")
        if self.stops is not None:
            return "stops"
        return self.widget or "slider"

    def show(self, value: Any) -> str:
        """A value as the widget shows it."""
        if self.names is not None and value in self.names:
            return self.names[value]
        return f"{value:g}" if isinstance(value, float) else str(value)

    def problem(self, value: Any) -> str | None:
        """Why a value is not allowed (in words that never repeat the value), or None."""
        if self.widths is not None:
            return self.widths.problem(value)
        if self.many:
            if any(v not in self.choices for v in value) or len(set(value)) < len(value):
                return f"must be some of {', '.join(self.choices)}, each once, joined by '-', or none"
            return None
        if self.choices is not None:
            return None if value in self.choices else f"must be one of {', '.join(map(str, self.choices))}"
        if isinstance(value, float) and not math.isfinite(value):
            return "must be a finite number"
        if not self.low <= value <= self.high:
            return f"must be between {number_text(self.low)} and {number_text(self.high)}"
        return None

    def options(self, current: Any) -> list:
        """The slider's stops, plus the current value if a link brought one in between."""
        values = {*self.stops, current} if self.problem(current) is None else set(self.stops)
        return sorted(values, key=lambda v: math.inf if self.zero_last and v == 0 else v)


SPEC = "spec"  # a settings field's metadata key


def setting(default: Any, spec: Spec) -> Any:
    """A settings dataclass field: its default and its spec, the one place the setting is written."""
    return field(default=default, metadata={SPEC: spec})


def specs_of(settings_class: type) -> dict[str, Spec]:
    """Each field's spec, in declaration order (the sidebar's order)."""
    found: tuple[Field, ...] = fields(settings_class)
    return {f.name: f.metadata[SPEC] for f in found}


def section(specs: Mapping[str, Spec], name: str) -> list[str]:
    """The settings under one of the sidebar's headings, in order."""
    return [field_name for field_name, spec in specs.items() if spec.section == name]
