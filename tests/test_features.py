"""Derived input features: their values, the points and the plane's grid alike, the network's
width, both engines, the link, and the sidebar's control."""

import json
import re
from dataclasses import asdict

import numpy as np
import pytest
import torch

from mlp.data import read_points_csv, uploaded_points
from mlp.data.features import NAMES, input_labels, input_width, network_inputs, ordered, with_features
from mlp.io import model_from_bytes
from mlp.lessons.playground import Settings, from_query, from_widgets, make_points, to_query
from mlp.runs.exports import playground_files
from mlp.runs.network_view import network_picture
from mlp.runs.playground import Playground, current_run
from tests.conftest import open_page
from tests.harness import plane_metric, shoot, wait_for_app

CIRCLES = {"kind": "circles", "n": 200, "classes": 2, "hidden": (), "lr": 0.03, "epochs": 100}


def test_each_feature_is_its_formula_after_x1_and_x2():
    X = np.array([[0.5, -2.0], [1.5, 3.0]], dtype=np.float32)
    out = with_features(X, NAMES)
    x1, x2 = X[:, 0], X[:, 1]
    expected = np.column_stack([x1, x2, x1**2, x2**2, x1 * x2, np.sin(x1), np.sin(x2)])
    assert out.dtype == np.float32 and out.shape == (2, 7)
    assert np.allclose(out, expected)
    assert input_labels(NAMES) == ["x1", "x2", "x1²", "x2²", "x1·x2", "sin x1", "sin x2"]
    assert with_features(X, ()) is X and input_width(()) == 2


def test_the_order_is_the_networks_whatever_order_they_were_chosen_in():
    assert ordered(["sinx2", "x1sq", "sinx2"]) == ("x1sq", "sinx2")
    X = np.random.default_rng(0).normal(size=(5, 2)).astype(np.float32)
    assert np.array_equal(with_features(X, ["x2sq", "x1sq"]), with_features(X, ["x1sq", "x2sq"]))
    assert Settings(features=("x2sq", "x1sq")).features == ("x1sq", "x2sq")


def test_torch_and_numpy_points_get_the_same_inputs():
    X = np.random.default_rng(1).normal(size=(20, 2)).astype(np.float32)
    t = with_features(torch.from_numpy(X), ["x1x2", "sinx1"])
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float32
    assert np.array_equal(t.numpy(), with_features(X, ["x1x2", "sinx1"]))


def test_points_and_the_planes_grid_are_transformed_alike_and_d_in_follows():
    settings = Settings(**CIRCLES, features=("x1sq", "x2sq", "x1x2"))
    run = Playground(settings, make_points(settings))
    assert run.model.config.d_in == 5 and run.inputs.X_train.shape[1] == 5
    assert run.points.X_train.shape[1] == 2  # the plane's own points stay 2D (the plot, the CSV)
    assert np.array_equal(run.inputs.X_train, with_features(run.points.X_train, settings.features))
    for grid in (run.view.grid, run.view.neuron_grid):
        assert torch.equal(grid.inputs, with_features(grid.points, settings.features))
    assert run.view.grid_probs().shape == (run.view.grid.res, run.view.grid.res, 2)
    assert [m.shape[0] for m in run.view.neuron_maps()] == []  # no hidden layer: no hidden maps


def test_the_network_view_shows_each_feature_as_an_input_with_its_map():
    settings = Settings(**CIRCLES | {"hidden": (4,)}, features=("x1sq", "sinx2"))
    run = Playground(settings, make_points(settings))
    picture = network_picture(run)
    assert picture.widths[0] == 4 and picture.labels[0] == ["x1", "x2", "x1²", "sin x2"]
    x1 = picture.maps[0][0]
    assert np.allclose(picture.maps[0][2], x1**2) and picture.weights[0].shape == (4, 4)
    assert np.allclose(picture.maps[0][3], np.sin(picture.maps[0][1]))


@pytest.mark.parametrize("engine", ["autograd", "manual"])
def test_both_engines_train_with_features(engine):
    settings = Settings(**CIRCLES, features=("x1sq", "x2sq"), engine=engine)
    run = Playground(settings, make_points(settings))
    run.trainer.fit()
    assert run.trainer.history.epochs[-1].val_acc >= 0.9  # a line can't do this without x1², x2²


def test_the_engines_agree_with_features():
    settings = Settings(**CIRCLES | {"lr": 0.3, "epochs": 20}, features=NAMES, optimizer="sgd")
    run = Playground(settings, make_points(settings))
    run.compare(True)
    run.run(20)
    assert run.view.engine_gap()["weights"] < 1e-5


def test_uploaded_points_get_the_same_features():
    rows = "\n".join(f"{x},{-x / 2},{int(x > 0)}" for x in np.linspace(-3, 3, 40))
    upload = read_points_csv(f"x1,x2,label\n{rows}\n".encode())
    settings = Settings(features=("x1sq", "sinx1"), hidden=(4,))
    run = current_run(None, settings, upload, "file-1")
    points = uploaded_points(upload, settings.test_fraction, settings.data_seed)
    assert np.array_equal(run.inputs.X_train, network_inputs(points, settings.features).X_train)
    assert run.model.config.d_in == 4


def test_the_weights_file_records_the_features():
    settings = Settings(**CIRCLES, features=("x2sq",))
    run = Playground(settings, make_points(settings))
    files = {name: make() for _, make, name in playground_files(run)}
    model, meta = model_from_bytes(files["playground-model.safetensors"])
    assert model.config.d_in == 3
    assert json.loads(files["playground-model.json"])["settings"]["features"] == ["x2sq"]
    assert meta["settings"]["features"] == ["x2sq"]
    assert files["points.csv"].splitlines()[0] == "x1,x2,label"  # the points themselves, 2D


def test_challenges_count_the_features_weights_and_the_circles_one_refuses_them():
    from mlp.curriculum.challenges import CHALLENGES

    squares = Settings(kind="circles", n=400, classes=2, hidden=(), lr=0.03, features=("x1sq", "x2sq"))
    assert "derived features" in CHALLENGES["circles-4"].problem(squares)
    spiral = Settings(kind="spiral", classes=3, hidden=(12,), epochs=1000, features=NAMES)
    assert "now 135" in CHALLENGES["spiral-100"].problem(spiral)  # (7 + 1) · 12 + (12 + 1) · 3


def test_features_need_a_new_network():
    run = current_run(None, Settings(**CIRCLES))
    assert current_run(run, Settings(**CIRCLES, features=("x1sq",))) is not run


def test_features_round_trip_through_the_link_and_bad_ones_get_notes():
    settings = Settings(**CIRCLES, features=("x1sq", "x2sq"))
    query = to_query(settings)
    assert query["feat"] == "x1sq-x2sq" and to_query(Settings())["feat"] == "none"
    assert from_query(query) == (settings, [])
    assert from_query({"feat": "sinx2,x1x2"})[0].features == ("x1x2", "sinx2")
    for bad in ("cube", "x1sq-x1sq", "x1sq-<b>x</b>"):
        settings, notes = from_query({"feat": bad})
        assert settings.features == () and [n.key for n in notes] == ["feat"]
        assert "must be some of x1sq, x2sq" in notes[0].reason and bad not in notes[0].reason


def test_sidebar_features_from_a_multiselect_list():
    settings, problems = from_widgets(asdict(Settings()) | {"features": ["x2sq"]}, Settings())
    assert settings.features == ("x2sq",) and problems == []


def test_the_sidebar_control_changes_the_networks_input_width():
    at = open_page("pages/playground.py")
    assert at.session_state["pg_run"].model.config.d_in == 2
    at.multiselect(key="pg_features").set_value(["x1sq", "x2sq", "sinx1"]).run()
    assert not at.exception
    run = at.session_state["pg_run"]
    assert run.model.config.d_in == 5 and run.settings.features == ("x1sq", "x2sq", "sinx1")
    assert at.query_params["feat"] in ("x1sq-x2sq-sinx1", ["x1sq-x2sq-sinx1"])


def network_inputs_shown(page) -> list[str]:
    """The network view's input units' labels, as the SVG draws them (right-aligned, left column)."""
    return page.locator('.st-key-pg_network svg text[text-anchor="end"]').all_text_contents()


@pytest.mark.browser
def test_the_lessons_squares_are_input_units_in_the_network_view(page, app_url):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/playground?lesson=circle-features")
    wait_for_app(page, heading="2D playground")
    page.locator('.st-key-pg_network svg[role="img"]').wait_for()
    assert network_inputs_shown(page) == ["x1", "x2"]
    page.get_by_role("button", name="Add the inputs x1² and x2²").click()
    page.wait_for_url(re.compile(r"feat=x1sq-x2sq"))
    wait_for_app(page)
    epoch = plane_metric(page, "Epoch")
    for n in range(1, 4):
        page.get_by_role("button", name=re.compile(r"^Epoch\b")).click()
        expect(epoch).to_have_text(str(n))  # waits on the page's own counter
    wait_for_app(page)
    expect(page.locator(".st-key-pg_network svg text").filter(has_text="x2²")).to_have_count(1)
    assert network_inputs_shown(page) == ["x1", "x2", "x1²", "x2²"]
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "playground-features.png")
