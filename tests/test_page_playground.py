"""The 2D playground page: AppTest drives the controls; Chromium plays and pauses it."""

import re

import pytest
import torch
from streamlit.testing.v1 import AppTest

from mlp.playground import PRESETS, to_query
from tests.conftest import ROOT, shoot, wait_for_app

PAGE = "pages/playground.py"


def open_page(query: dict | None = None) -> AppTest:
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    app.run()
    for key, value in (query or {}).items():
        app.query_params[key] = value
    app.switch_page(PAGE).run()
    assert not app.exception, app.exception
    return app


def metric(app, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def weights(app) -> list[torch.Tensor]:
    return [p.detach().clone() for p in app.session_state["pg_run"].model.parameters()]


@pytest.fixture
def at():
    return open_page()


def test_step_and_epoch_move_the_counters(at):
    assert metric(at, "Step") == "0" and metric(at, "Epoch") == "0"
    at.button(key="pg_step").click().run()
    assert metric(at, "Step") == "1" and metric(at, "Epoch") == "1"  # full batch: one step, one epoch
    at.select_slider(key="pg_batch_size").set_value(32).run()
    at.button(key="pg_epoch").click().run()
    run = at.session_state["pg_run"]
    assert metric(at, "Epoch") == "2" and run.trainer.step_count == 1 + run.trainer.steps_per_epoch
    assert re.fullmatch(r"\d+\.\d%", metric(at, "Test accuracy"))


def test_reset_gives_the_same_initial_weights(at):
    start = weights(at)
    for _ in range(3):
        at.button(key="pg_epoch").click().run()
    assert not all(torch.equal(a, b) for a, b in zip(start, weights(at), strict=True))
    at.button(key="pg_reset").click().run()
    assert all(torch.equal(a, b) for a, b in zip(start, weights(at), strict=True))
    assert metric(at, "Step") == "0"
    at.button(key="pg_reinit").click().run()
    assert at.session_state["pg_seed"] == 1
    assert not all(torch.equal(a, b) for a, b in zip(start, weights(at), strict=True))


def test_play_trains_on_every_frame_and_pause_stops_it(at):
    at.button(key="pg_play").click().run()
    assert at.session_state["pg_playing"] is True and at.button(key="pg_pause").label == "Pause"
    steps = [int(metric(at, "Step"))]
    for _ in range(3):
        at.run()  # each run of the page is a frame of the live fragment
        steps.append(int(metric(at, "Step")))
    assert steps == [10, 20, 30, 40]  # speed 10
    at.button(key="pg_pause").click().run()
    assert at.session_state["pg_playing"] is False and at.button(key="pg_play").label == "Play"
    paused = metric(at, "Step")
    at.run()
    assert metric(at, "Step") == paused


def test_divergence_pauses_with_a_banner(at):
    at.selectbox(key="pg_optimizer").set_value("sgd").run()
    at.selectbox(key="pg_activation").set_value("leaky_relu").run()
    at.select_slider(key="pg_lr").set_value(10.0).run()
    at.button(key="pg_play").click().run()
    for _ in range(5):
        at.run()
    assert at.session_state["pg_playing"] is False
    assert any("Training diverged" in e.value for e in at.error)
    assert all(torch.isfinite(p).all() for p in weights(at))
    assert not at.exception


def test_the_link_reproduces_the_settings_and_bad_parameters_warn():
    settings = PRESETS["moons"]
    at = open_page(to_query(settings))
    assert at.session_state["pg_kind"] == "moons" and at.session_state["pg_hidden"] == "8, 8"
    assert at.session_state["pg_run"].settings == settings
    assert dict(at.query_params) == {k: [v] for k, v in to_query(settings).items()} or at.query_params["lr"]
    bad = open_page({"lr": "fast", "hidden": "8-8", "n": "-5"})
    warnings = " ".join(w.value for w in bad.warning)
    assert "Ignored lr='fast'" in warnings and "Ignored n='-5'" in warnings
    assert bad.session_state["pg_run"].settings.hidden == (8, 8)


def test_settings_changes_update_the_address_bar(at):
    at.select_slider(key="pg_lr").set_value(0.1).run()
    assert at.query_params["lr"] == ["0.1"] or at.query_params["lr"] == "0.1"


def test_a_preset_fills_the_sidebar(at):
    at.selectbox(key="pg_preset").set_value("xor").run()
    assert at.session_state["pg_kind"] == "xor" and at.session_state["pg_activation"] == "tanh"
    assert at.session_state["pg_run"].settings == PRESETS["xor"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a,b\n1,2\n", "Expected the header x1, x2, label"),
        (b"x1,x2,label\n" + b"1,2,0\n" * 20, "two classes"),
    ],
)
def test_a_bad_csv_is_explained_and_nothing_is_lost(at, content, message):
    at.button(key="pg_epoch").click().run()
    run = at.session_state["pg_run"]
    at.file_uploader(key="pg_upload").upload("bad.csv", content, "text/csv").run()
    assert not at.exception
    assert message in at.sidebar.error[0].value
    assert at.session_state["pg_run"] is run and metric(at, "Epoch") == "1"


def test_a_good_csv_becomes_the_data(at):
    rows = "".join(f"{i},{(i * 7) % 11},{i % 3}\n" for i in range(60))
    at.file_uploader(key="pg_upload").upload("mine.csv", ("x1,x2,label\n" + rows).encode(), "text/csv").run()
    assert not at.exception
    run = at.session_state["pg_run"]
    assert run.points.name == "mine.csv" and run.points.classes == 3
    assert len(run.points.y_train) + len(run.points.y_test) == 60
    assert "60 points, 3 classes" in at.sidebar.success[0].value


def test_bad_hidden_widths_keep_the_network(at):
    at.text_input(key="pg_hidden").input("16, banana").run()
    assert "not a whole number" in at.sidebar.error[0].value
    assert at.session_state["pg_run"].settings.hidden == (32, 32)


def test_comparing_engines_shows_their_gap(at):
    at.toggle(key="pg_compare").set_value(True).run()
    for _ in range(3):
        at.button(key="pg_epoch").click().run()
    assert any(c.value.startswith("Engines side by side over 3 epochs") for c in at.caption)


@pytest.mark.browser
def test_play_in_chromium_advances_and_redraws_then_pauses(page, app_url):
    page.goto(f"{app_url}/playground")
    wait_for_app(page, heading="2D playground")

    def step() -> int:
        return int(page.get_by_test_id("stMetric").nth(1).inner_text().split()[-1].replace(",", ""))

    def boundary() -> str:
        return page.locator(".js-plotly-plot image").first.get_attribute("href")

    before_step, before_image = step(), boundary()
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(
        "() => { const m = document.querySelectorAll('[data-testid=\"stMetric\"]')[1];"
        " return m && parseInt(m.innerText.split('\\n').pop().replace(/,/g, '')) >= 30; }",
        timeout=60_000,
    )
    assert step() > before_step
    assert boundary() != before_image  # the decision boundary was redrawn
    shoot(page, "playground-playing.png")
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Play").wait_for()  # the page has rerun, paused
    wait_for_app(page)
    paused = step()
    page.wait_for_timeout(1500)
    assert step() == paused
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "playground-paused.png")
