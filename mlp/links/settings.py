"""What every page's settings share: one declaration per setting, and the link form.

A page's settings are one frozen dataclass whose every field is declared with `setting()`:
its default and a `Spec` that says what it may hold, how a link writes it, and how the
sidebar shows it (label, help, widget, section). From that one declaration come the widget
(pages/ui/controls.py), link reading and writing, validation and, where a field has the same
name as TrainConfig's, the training config. Specs that several pages share are declared
below once, each page narrowing a range with `Spec.like`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, asdict, dataclass, field, fields, replace
from typing import Any

from mlp.activations import ACTIVATIONS
from mlp.errors import InputError
from mlp.model import INITS
from mlp.train import OPTIMIZERS, SCHEDULERS

MAX_LINK_VALUE = 200  # characters; a longer link value is refused unread


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


def matching(settings: Any, target: type, skip: Sequence[str] = ()) -> dict[str, Any]:
    """The settings' fields that `target` (a dataclass, e.g. TrainConfig) has too, by name."""
    names = {f.name for f in fields(target)} - set(skip)
    return {f.name: getattr(settings, f.name) for f in fields(settings) if f.name in names}


# --- settings several pages share: each page narrows a range with .like() --------------------
NETWORK, TRAINING = "Network", "Training"
HIDDEN = Spec("hidden", label="Hidden widths", section=NETWORK)  # a page gives widths=WidthLimits(...)
ACTIVATION = Spec(
    "act",
    choices=tuple(ACTIVATIONS),
    label="Activation",
    section=NETWORK,
    names={name: row.label for name, row in ACTIVATIONS.items()},
)
INIT_NAMES = {
    "kaiming": "He (Kaiming)",
    "xavier": "Xavier (Glorot)",
    "normal": "N(0, 0.02)",
    "pytorch": "PyTorch",
}
INIT = Spec("init", choices=INITS, label="Initialisation", section=NETWORK, names=INIT_NAMES)
DROPOUT = Spec("dropout", 0.0, 0.9, step=0.05, label="Dropout", section=NETWORK)
SEED = Spec("seed", 0, 2**31 - 1, label="Seed", section=NETWORK, widget="number")
OPTIMIZER = Spec(
    "opt",
    choices=tuple(OPTIMIZERS),
    label="Optimizer",
    section=TRAINING,
    names={name: row.label for name, row in OPTIMIZERS.items()},
    help=" ".join(f"{row.label}: {row.help}" for row in OPTIMIZERS.values()),
)
MOMENTUM = Spec(
    "mom",
    stops=(0.0, 0.5, 0.9, 0.95, 0.99),
    label="Momentum",
    section=TRAINING,
    help="For momentum and Nesterov: the share of the last step that carries into the next.",
)
LR = Spec("lr", stops=(1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3), label="Learning rate", section=TRAINING)
BATCH = Spec("bs", stops=(16, 32, 64, 128, 256), label="Batch size", section=TRAINING)
WEIGHT_DECAY = Spec("wd", stops=(0.0, 1e-5, 1e-4, 1e-3, 1e-2), label="Weight decay", section=TRAINING)
PENALTY_STOPS = (0.0, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)  # TensorFlow Playground's rates
PENALTY_LOSS = (
    " The train loss shown includes the penalty; the test loss is the data loss alone, as in "
    "TensorFlow Playground, so the two curves compare how well each set is fitted."
)
L1 = Spec(
    "l1",
    stops=PENALTY_STOPS,
    label="L1 rate (λ₁)",
    section=TRAINING,
    names={0.0: "off"},
    help="Adds λ₁·Σ|w| over the weights (not the biases) to the loss. Applied as a proximal step "
    "after each update, w ← sign(w)·max(|w| − lr·λ₁, 0), so weights land on exactly 0: the "
    "network view counts them." + PENALTY_LOSS,
)
L2 = Spec(
    "l2",
    stops=PENALTY_STOPS,
    label="L2 rate (λ₂)",
    section=TRAINING,
    names={0.0: "off"},
    help="Adds λ₂·Σw² over the weights (not the biases) to the loss; its gradient 2λ₂·w flows "
    "through backprop for every optimizer, so weights shrink but rarely reach 0. Weight decay "
    "instead lives in the optimizer (AdamW's is decoupled) and is not in the loss." + PENALTY_LOSS,
)
SCHEDULE = Spec("sched", choices=SCHEDULERS, label="Learning-rate schedule", section=TRAINING)
WARMUP = Spec("warmup", 0.0, 10.0, step=0.5, label="Warmup epochs", section=TRAINING, widget="number")
EPOCHS = Spec("epochs", 1, 100, label="Epochs", section=TRAINING, widget="number")


def check(settings: Any, specs: Mapping[str, Spec]) -> None:
    """Raise ValueError naming the first field of `settings` its spec refuses."""
    for name, spec in specs.items():
        value = getattr(settings, name)
        if problem := spec.problem(value):
            if isinstance(value, str):  # a person's text: quoted, shown as it is
                raise InputError(f"{name} {problem}; got {{}}.", value[:40])
            raise ValueError(problem if spec.widths else f"{name} {problem}; got {value!r}.")


@dataclass(frozen=True)
class LinkNote:
    """A link parameter that was ignored or changed, and why. `value` is the link's own text:
    untrusted, to be shown as plain text; `reason` never repeats it."""

    key: str
    value: str
    reason: str

    def __str__(self) -> str:
        return f"Ignored {self.key}={self.value}: {self.reason}."


def to_query(settings: Any, specs: Mapping[str, Spec]) -> dict[str, str]:
    """Every setting as a string, keyed by its short link name."""
    query = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if specs[f.name].widths is not None:
            text = "-".join(str(w) for w in value) or "none"
        elif specs[f.name].many:
            text = "-".join(value) or "none"
        elif isinstance(value, float):
            text = repr(value)
        else:
            text = str(value)
        query[specs[f.name].key] = text
    return query


def _parse(default: Any, text: str, spec: Spec) -> Any:
    if spec.widths is not None:
        return spec.widths.parse(text)
    if spec.many:  # "x1sq-x2sq" (or with commas); "none" or nothing for none
        return tuple(p for p in re.split(r"[\s,;-]+", text.strip()) if p and p.lower() != "none")
    if isinstance(default, bool):
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(text)
        return text.lower() in ("true", "1")
    if isinstance(default, int):
        value = float(text)
        if not value.is_integer():
            raise ValueError(text)
        return int(value)
    if isinstance(default, float):
        return float(text)
    return text


def _expected(name: str, default: Any, spec: Spec) -> str:
    """What a link value for this setting must look like, in words."""
    label = name.replace("_", " ")
    if spec.widths is not None:
        return f"{label} must be {spec.widths.help.rstrip('.')}"
    if isinstance(default, bool):
        return f"{label} must be true or false"
    bounded = spec.low is not None and spec.high is not None
    limits = f" between {number_text(spec.low)} and {number_text(spec.high)}" if bounded else ""
    if isinstance(default, int):
        return f"{label} must be a whole number{limits}"
    return f"{label} must be a number{limits}"


def read_link(
    query: Mapping[str, Any], base: Any, specs: Mapping[str, Spec]
) -> tuple[dict[str, Any], set[str], list[LinkNote]]:
    """The field values a link gives, over `base`: (values, fields the link set, notes on the rest)."""
    by_key = {spec.key: name for name, spec in specs.items()}
    values, given, notes = asdict(base), set(), []
    for key, raw in query.items():
        text = str(raw[-1] if isinstance(raw, list) and raw else raw)
        name = by_key.get(key)
        if name is None:
            notes.append(LinkNote(key, text, "this page has no such setting"))
            continue
        if len(text) > MAX_LINK_VALUE:
            notes.append(LinkNote(key, text, f"longer than {MAX_LINK_VALUE} characters"))
            continue
        try:
            value = _parse(values[name], text, specs[name])
        except (ValueError, OverflowError):
            notes.append(LinkNote(key, text, _expected(name, values[name], specs[name])))
            continue
        if problem := specs[name].problem(value):
            notes.append(LinkNote(key, text, f"{name.replace('_', ' ')} {problem}".rstrip(".")))
            continue
        values[name] = value
        given.add(name)
    return values, given, notes


def widget_values(settings: Any, prefix: str, specs: Mapping[str, Spec]) -> dict[str, Any]:
    """Settings as the sidebar's widget values (session-state keys `prefix + field`)."""
    state = {}
    for name, value in asdict(settings).items():
        state[prefix + name] = WidthLimits.text(value) if specs[name].widths else value
        if specs[name].many:
            state[prefix + name] = list(value)  # a multiselect's value is a list
    return state


def from_widgets(
    values: Mapping[str, Any],
    fallback: Any,
    specs: Mapping[str, Spec],
    fix: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[Any, list[ValueError]]:
    """Settings like `fallback` from the sidebar's values (hidden widths as text).

    What can't be used keeps `fallback`'s value, and the problems say why; `fix` applies a
    page's own rules (a choice that disables another) before the settings are built.
    """
    values, problems = dict(values), []
    for name, spec in specs.items():
        if spec.widths is not None and isinstance(values.get(name), str):
            try:
                values[name] = spec.widths.parse(values[name])
            except ValueError as err:
                problems.append(err)
                values[name] = getattr(fallback, name)
        if spec.many:
            values[name] = tuple(values[name])
    if fix is not None:
        fix(values)
    try:
        return type(fallback)(**values), problems
    except ValueError as err:
        return fallback, [*problems, err]
