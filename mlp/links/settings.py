"""What every page's settings share: one declaration per setting, and the link form.

A page's settings are one frozen dataclass whose every field is declared with `setting()`:
its default and a `Spec` that says what it may hold, how a link writes it, and how the
sidebar shows it (label, help, widget, section). From that one declaration come the widget
(pages/ui/controls.py), link reading and writing, validation and, where a field has the same
name as TrainConfig's, the training config. Specs that several pages share are declared
below once, each page narrowing a range with `Spec.like`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from mlp.activations import ACTIVATIONS
from mlp.errors import InputError
from mlp.model import INITS
from mlp.spec import (
    NETWORK,
    SPEC,
    Spec,
    WidthLimits,
    number_text,
)
from mlp.train import TrainConfig, supports_dropout
from mlp.train.config import TRAIN_SPECS

MAX_LINK_VALUE = 200  # characters; a longer link value is refused unread
TRAINED = "trained"  # a settings field's metadata key: the TrainConfig setting it declares (train_setting)


# --- settings several pages share: each page narrows a range with .like() --------------------
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
DROPOUT = Spec(
    "dropout",
    0.0,
    0.9,
    step=0.05,
    label="Dropout",
    section=NETWORK,
    applies=lambda values: supports_dropout(values.get("engine", "autograd")),
)
SEED = Spec("seed", 0, 2**31 - 1, label="Seed", section=NETWORK, widget="number")


def train_setting(name: str, default: Any = MISSING, **narrowed: Any) -> Any:
    """A page's settings field for TrainConfig's setting `name`: its one declaration there
    (mlp.train.config: default, range, link name, label, help, when it applies), with the page's
    own default or a narrower range, stops or label (`narrowed`, as Spec.like takes them)."""
    declared = next(f for f in fields(TrainConfig) if f.name == name)
    spec = TRAIN_SPECS[name].like(**narrowed) if narrowed else TRAIN_SPECS[name]
    value = declared.default if default is MISSING else default
    return field(default=value, metadata={SPEC: spec, TRAINED: name})


def train_settings(settings: Any) -> dict[str, Any]:
    """The values of `settings`' fields declared with train_setting, by TrainConfig's names."""
    return {f.metadata[TRAINED]: getattr(settings, f.name) for f in fields(settings) if TRAINED in f.metadata}


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
