"""mlp.data.edits and the run: points added and erased by clicks, their link form, training on."""

import io

import numpy as np
import pandas as pd
import pytest
import torch

from mlp.data import points_csv
from mlp.data.edits import (
    MAX_ADDED,
    MAX_ERASED,
    MAX_TEXT,
    Edits,
    add_point,
    apply_edits,
    describe,
    edits_text,
    erase_near,
    erase_radius,
    read_edits,
)
from mlp.lessons.playground import PRESETS, Settings, from_query, link, link_edits, make_points
from mlp.runs.exports import playground_files
from mlp.runs.playground import current_run

BASE = make_points(Settings())


def test_an_added_point_is_a_training_point_of_its_class_rounded_to_what_a_link_carries():
    edits = add_point(Edits(), 0.1234, -0.9876, 2, BASE.classes)
    assert edits.added == ((0.12, -0.99, 2),)
    points = apply_edits(BASE, edits)
    assert len(points.y_train) == len(BASE.y_train) + 1 and len(points.y_test) == len(BASE.y_test)
    assert points.X_train[-1].tolist() == pytest.approx([0.12, -0.99]) and points.y_train[-1] == 2
    assert points.X_train.dtype == np.float32 and points.y_train.dtype == np.int64
    assert describe(points, edits) == f"{len(BASE.y_train) + 1:,} train points (1 added)"


def test_a_class_the_set_lacks_and_more_than_the_cap_are_refused():
    with pytest.raises(ValueError, match="not one of this set's classes, 0 to 2"):
        add_point(Edits(), 0, 0, 3, 3)
    full = Edits(tuple((0.0, 0.0, 0) for _ in range(MAX_ADDED)))
    with pytest.raises(ValueError, match=f"at most {MAX_ADDED} added points"):
        add_point(full, 0, 0, 1, 3)


def test_erase_removes_every_point_near_the_click_train_and_test_and_added_ones():
    x, y = BASE.X_test[0]
    edits = add_point(Edits(), float(x), float(y), 1, 3)
    radius = erase_radius(BASE)
    assert radius == pytest.approx(0.04 * (BASE.extent[1] - BASE.extent[0]))  # 4% of the plane's width
    erased = erase_near(edits, BASE, float(x), float(y), radius)
    assert erased.added == ()  # the point just added went too
    everything = np.concatenate([BASE.X_train, BASE.X_test])
    near = np.flatnonzero(np.hypot(*(everything - [x, y]).T) <= radius)
    assert erased.erased == tuple(near) and len(BASE.y_train) in near  # test point 0 among them
    points = apply_edits(BASE, erased)
    assert len(points.y_train) + len(points.y_test) == len(everything) - len(near)
    assert np.hypot(*(np.concatenate([points.X_train, points.X_test]) - [x, y]).T).min() > radius
    # Hidden test points are out of reach: a click erases what the visitor sees.
    seen = erase_near(Edits(), BASE, float(x), float(y), radius, test=False)
    assert all(i < len(BASE.y_train) for i in seen.erased)


def test_erasing_is_idempotent_and_keeps_the_plane():
    once = erase_near(Edits(), BASE, 0.0, 0.0, 0.3)
    assert erase_near(once, BASE, 0.0, 0.0, 0.3) == once
    assert apply_edits(BASE, once).extent == BASE.extent  # the run's drawing grid still fits
    edge = add_point(Edits(), 5.0, -5.0, 0, 3)  # beyond the plane: kept at its edge
    assert apply_edits(BASE, edge).X_train[-1].tolist() == pytest.approx([BASE.extent[1], BASE.extent[0]])


def test_erasing_every_training_point_is_refused():
    with pytest.raises(ValueError, match="every training point"):
        erase_near(Edits(), BASE, 0.0, 0.0, 100.0)


@pytest.mark.parametrize(
    "edits",
    [
        Edits(),
        Edits(((0.5, -1.25, 1),)),
        Edits(((0.0, 0.0, 0), (-1.5, 1.5, 2)), (0, 1, 2, 7, 40, 41, 599)),
        Edits((), (3,)),
        Edits(
            tuple((i / 100, -i / 100, i % 3) for i in range(MAX_ADDED)), tuple(range(0, 2 * MAX_ERASED, 2))
        ),  # both caps, the erased points every other one (no ranges): the longest link
    ],
)
def test_the_link_form_round_trips(edits):
    text = edits_text(edits)
    assert read_edits(text) == edits
    assert set(text) <= set("0123456789.-_~x") and len(text) <= MAX_TEXT  # as a URL keeps them


def test_the_link_form_is_compact():
    assert edits_text(Edits(((0.5, -1.25, 1),), (3, 4, 5, 9))) == "0.5_-1.25_1~x3-5~x9"
    assert len(edits_text(Edits(tuple((-1.23, 1.23, 2) for _ in range(MAX_ADDED))))) < 14 * MAX_ADDED


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("garbage", "not a point written x1_x2_class"),
        ("1_2", "not a point written x1_x2_class"),
        ("1_2_-1", "not a point written x1_x2_class"),
        ("a_2_1", "not a number"),
        ("nan_0_1", "beyond ±100"),
        ("1e9_0_1", "beyond ±100"),
        ("xabc", "not x and a point's number"),
        ("x9-3", "not x and a point's number"),
        ("x" + "9" * 5000, "not x and a point's number"),
        ("x0-99999999", f"more than {MAX_ERASED} erased points"),
        (f"x0-{MAX_ERASED}", f"more than {MAX_ERASED} erased points"),
        ("~".join(["0_0_0"] * (MAX_ADDED + 1)), f"more than {MAX_ADDED} added points"),
        ("0_0_0~" * 2000, "longer than 10,000 characters"),
    ],
)
def test_a_bad_link_form_says_why(text, reason):
    with pytest.raises(ValueError, match=reason):
        read_edits(text)


def test_a_link_carries_the_edits_and_a_bad_one_loses_nothing_else():
    settings = PRESETS["moons"]
    edits = Edits(((0.5, -0.25, 1),), (2, 3))
    query = link(settings, edits=edits)
    assert query["pts"] == "0.5_-0.25_1~x2-3"
    assert from_query(query) == (settings, []) and link_edits(query, settings) == edits
    assert "pts" not in link(settings) and "pts" not in link(settings, uploaded=True, edits=edits)
    assert link_edits(query | {"data": "file"}, settings) == Edits()  # a file's points: not in a link
    for bad, reason in [
        ("0_0_2", "classes are 0 to 1"),  # moons has 2 classes
        (f"x{settings.n}", f"points are 0 to {settings.n - 1}"),
        ("0_0_0~" * 2000, "longer than"),
    ]:
        read, notes = from_query(query | {"pts": bad})
        assert read == settings and link_edits(query | {"pts": bad}, settings) == Edits()
        ((note,),) = [notes]
        assert note.key == "pts" and reason in note.reason and len(note.value) <= 61


def test_adding_a_point_trains_on_from_the_same_weights_and_optimizer_state():
    settings = PRESETS["moons"]
    run = current_run(None, settings)
    run.run(25)
    before = [p.detach().clone() for p in run.model.parameters()]
    stepper = run.trainer.stepper  # the optimizer, its moments within
    edits = add_point(Edits(), 1.0, 1.0, 0, 2)
    assert current_run(run, settings, edits=edits) is run
    assert all(torch.equal(a, b) for a, b in zip(before, run.model.parameters(), strict=True))
    assert run.trainer.stepper is stepper and run.trainer.step_count == 25
    assert len(run.points.y_train) == len(run.base.y_train) + 1 == run.trainer.batches.n
    run.run(5)
    assert run.trainer.step_count == 30 and run.trainer.history.epochs[-1].step == 30
    # A network change keeps the set's edits; a new set (other data settings) starts without them.
    wider = current_run(run, settings.__class__(**{**settings.__dict__, "hidden": (4,)}), edits=edits)
    assert wider is not run and wider.edits == edits and len(wider.points.y_train) == len(run.points.y_train)
    other = current_run(wider, settings.__class__(**{**settings.__dict__, "data_seed": 1}), edits=edits)
    assert other.edits == Edits() and len(other.points.y_train) == len(other.base.y_train)


def test_erasing_points_of_a_regression_keeps_it_a_regression():
    settings = PRESETS["regression"]
    run = current_run(None, settings)
    run.run(3)
    x, y = run.base.X_train[0]
    edits = erase_near(Edits(), run.base, float(x), float(y), erase_radius(run.points))
    assert current_run(run, settings, edits=edits) is run and len(run.points.y_train) < len(run.base.y_train)
    assert run.points.task == "regress" and run.trainer.cfg.loss == "mse"
    run.run(2)
    assert run.trainer.step_count == 5 and np.isfinite(run.trainer.history.epochs[-1].train_loss)


def test_the_twin_trains_on_the_edited_set_too():
    run = current_run(None, PRESETS["moons"])
    run.compare(True)
    current_run(run, run.settings, edits=erase_near(Edits(), run.base, 0.0, 0.0, 0.5))
    assert run.twin.batches.n == run.trainer.batches.n == len(run.points.y_train) < len(run.base.y_train)
    run.run(3)
    assert run.view.engine_gap()["weights"] < 1e-4


def test_the_data_csv_has_the_added_points_and_not_the_erased_ones():
    run = current_run(None, PRESETS["moons"])
    edits = erase_near(add_point(Edits(), 0.25, 0.75, 1, 2), run.base, -1.0, 0.0, 0.3)
    current_run(run, run.settings, edits=edits)
    (csv,) = [make() for label, make, _ in playground_files(run) if label == "Data (.csv)"]
    assert csv == points_csv(run.points)
    frame = pd.read_csv(io.StringIO(csv))
    assert len(frame) == len(run.base.y_train) + len(run.base.y_test) + 1 - len(edits.erased)
    assert ((frame.x1 == 0.25) & (frame.x2 == 0.75) & (frame.label == 1)).sum() == 1
