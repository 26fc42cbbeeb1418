"""The 2D playground page: AppTest drives the controls; Chromium plays and pauses it."""

import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from unittest import mock
from urllib.parse import urlencode

import pytest
import torch
from playwright.sync_api import expect

from mlp.curriculum.catalogue import LESSONS
from mlp.io import model_from_bytes
from mlp.lessons.playground import PRESETS, to_query
from mlp.runs.exports import playground_files
from mlp.runs.playground import current_run
from pages.serving.frames import GONE, PATH, STEP_SECONDS, TOKEN_HEADER, serve_frame
from pages.ui import playground as panels
from pages.ui import touch
from tests.conftest import open_page, shoot, wait_for_app
from tests.harness import (
    ARTIFACTS,
    NO_FRAME_SOCKET_JS,
    button,
    frame_statuses,
    plane_metric,
    plane_metrics,
    serve_app,
)
from tests.legibility import axe_findings, report

PAGE = "pages/playground.py"
PRESETS_LINK = {name: to_query(settings) for name, settings in PRESETS.items()}


def plane_data(app) -> dict:
    """What the page handed the plane's component on its last run (pages/ui/plane.py)."""
    (element,) = [e for e in app.get("bidi_component") if e.proto.component_name == "mlp_plane"]
    return json.loads(element.proto.json)


def metric(app, label: str) -> str:
    """A number shown with the plane, as the page's last run drew it."""
    return dict(plane_data(app)["frame"]["metrics"])[label]


def next_frame(app) -> dict:
    """What the playing plane's next request for a frame gets (pages/serving/frames.py)."""
    status, frame = serve_frame(plane_data(app)["stream"])
    assert status == 200, frame
    return frame


def weights(app) -> list[torch.Tensor]:
    return [p.detach().clone() for p in app.session_state["pg_run"].model.parameters()]


@pytest.fixture
def at():
    return open_page(PAGE)


def test_step_and_epoch_move_the_counters(at):
    assert metric(at, "Step") == "0" and metric(at, "Epoch") == "0"
    at.button(key="pg_step").click().run()
    assert metric(at, "Step") == "1" and metric(at, "Epoch") == "1"  # full batch: one step, one epoch
    at.select_slider(key="pg_batch_size").set_value(32).run()
    at.button(key="pg_epoch").click().run()
    run = at.session_state["pg_run"]
    assert metric(at, "Epoch") == "2" and run.trainer.step_count == 1 + run.trainer.steps_per_epoch
    assert re.fullmatch(r"\d+\.\d%", metric(at, "Test accuracy"))


@pytest.mark.slow
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


@pytest.mark.slow
def test_play_trains_on_every_frame_and_pause_stops_it(at, clock):
    at.button(key="pg_play").click().run()
    assert at.session_state["pg_playing"] is True and at.button(key="pg_play").label == "Pause"  # one button
    assert plane_data(at)["playing"] is True  # the plane asks for its frames itself
    steps = []
    for _ in range(4):  # a tab asking every 0.1 s: a frame carries the steps due since the last
        clock[0] += STEP_SECONDS
        steps.append(next_frame(at)["step"])
    assert steps == [10, 20, 30, 40]  # speed 100 steps a second
    at.button(key="pg_play").click().run()
    assert at.session_state["pg_playing"] is False and at.button(key="pg_play").label == "Play"
    assert plane_data(at)["playing"] is False and metric(at, "Step") == "40"
    assert next_frame(at) == {"playing": False}  # a request after Pause landed trains nothing
    at.run()
    assert metric(at, "Step") == "40"


@pytest.mark.slow
def test_divergence_pauses_with_a_banner(at):
    at.selectbox(key="pg_optimizer").set_value("sgd").run()
    at.selectbox(key="pg_activation").set_value("leaky_relu").run()
    at.select_slider(key="pg_lr").set_value(10.0).run()
    at.button(key="pg_play").click().run()
    for _ in range(20):
        if (frame := next_frame(at)).get("finished"):
            break
    assert frame["finished"] and frame["banner"] == "error"  # the plane then asks the page to rerun
    at.run()
    assert at.session_state["pg_playing"] is False and at.button(key="pg_play").label == "Play"
    assert any("Training diverged" in e.value for e in at.error)
    assert all(torch.isfinite(p).all() for p in weights(at))
    assert not at.exception


def query(app) -> dict[str, str]:
    """The address bar's parameters as plain strings (AppTest keeps each as a list)."""
    return {k: v[-1] if isinstance(v, list) else v for k, v in app.query_params.items()}


def test_discretize_changes_the_planes_look_and_nothing_in_training(at):
    at.button(key="pg_step").click().run()
    trainer = at.session_state["pg_run"].trainer
    stepper, shaded = trainer.stepper, plane_data(at)["frame"]
    at.toggle(key="pg_discretize").set_value(True).run()
    frame = plane_data(at)["frame"]
    assert frame["discrete"] and not shaded["discrete"] and frame["image"] != shaded["image"]
    assert at.query_params["discrete"] == "True"
    assert at.session_state["pg_run"].trainer is trainer and trainer.stepper is stepper  # Adam's moments kept
    at.toggle(key="pg_show_test").set_value(False).run()
    assert plane_data(at)["points"]["test"] == [] and trainer.stepper is stepper


def test_the_link_reproduces_the_settings_and_bad_parameters_warn():
    settings = PRESETS["moons"]
    at = open_page(PAGE, to_query(settings))
    assert at.session_state["pg_kind"] == "moons" and at.session_state["pg_hidden"] == "8, 8"
    assert at.session_state["pg_run"].settings == settings
    assert query(at) == to_query(settings)
    bad = open_page(PAGE, {"lr": "fast", "hidden": "8-8", "n": "-5"})
    warnings = " ".join(w.value for w in bad.warning)
    assert "Ignored ` lr=fast `: lr must be a number" in warnings and "Ignored ` n=-5 `" in warnings
    assert bad.session_state["pg_run"].settings.hidden == (8, 8)


def test_a_link_is_shown_as_text_never_as_markdown():
    trap = {"[Log in here](http://127.0.0.1:9/login)": "1", "lr": "![](http://127.0.0.1:9/pixel.png)"}
    at = open_page(PAGE, trap)
    texts = [w.value for w in at.warning]
    assert len(texts) == 2
    for text in texts:  # each echo sits inside a code span: Markdown draws no link or image there
        echoed = text.split("`")[1]
        assert "http://127.0.0.1:9/" in echoed and text.count("`") == 2


def test_settings_changes_update_the_address_bar(at):
    at.select_slider(key="pg_lr").set_value(0.1).run()
    assert query(at)["lr"] == "0.1"


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
    assert message in at.error[0].value
    assert at.session_state["pg_run"] is run and metric(at, "Epoch") == "1"


def test_a_good_csv_becomes_the_data(at):
    rows = "".join(f"{i},{(i * 7) % 11},{i % 3}\n" for i in range(60))
    at.file_uploader(key="pg_upload").upload("mine.csv", ("x1,x2,label\n" + rows).encode(), "text/csv").run()
    assert not at.exception
    run = at.session_state["pg_run"]
    assert run.points.name == "mine.csv" and run.points.classes == 3
    assert len(run.points.y_train) + len(run.points.y_test) == 60
    assert "60 points, 3 classes" in at.success[0].value and "` mine.csv `" in at.success[0].value
    assert query(at)["data"] == "file"
    assert at.slider(key="pg_n").disabled and at.slider(key="pg_classes").disabled


def test_the_regression_preset_shows_mse_and_r2_a_colour_scale_and_no_confusion(at):
    at.selectbox(key="pg_preset").set_value("regression").run()
    at.button(key="pg_epoch").click().run()
    assert not at.exception and at.session_state["pg_run"].points.task == "regress"
    assert [label for label, _ in plane_data(at)["frame"]["metrics"]][2:] == [
        "Train MSE",
        "Test MSE",
        "Test R²",
    ]
    assert plane_data(at)["points"]["scale"]["label"] == "value (output and label)"
    assert "pg_classes" not in [s.key for s in at.sidebar.slider]  # no classes to count
    assert "Confusion matrix on the test points" not in [c.value for c in at.caption]
    assert query(at)["data"] == "reg-gauss"


def test_a_challenge_waits_for_a_classification_set_and_nothing_breaks():
    at = open_page(PAGE, {"challenge": "moons-20"})
    at.selectbox(key="pg_preset").set_value("regression").run()
    at.button(key="pg_epoch").click().run()
    assert not at.exception and at.session_state["pg_run"].points.task == "regress"
    assert "Challenges score a classifier's accuracy: pick a classification data set." in [
        c.value for c in at.caption
    ]


def test_a_csv_of_values_becomes_a_regression(at):
    rows = "".join(f"{i},{(i * 7) % 11},{((i * 7) % 11) / 10 - 0.5}\n" for i in range(60))
    at.file_uploader(key="pg_upload").upload("vals.csv", ("x1,x2,value\n" + rows).encode(), "text/csv").run()
    assert not at.exception and "60 points with real values (a regression)" in at.success[0].value
    assert at.session_state["pg_run"].points.task == "regress" and metric(at, "Test R²") == "–"


def test_the_compare_panel_says_which_path_the_steps_take(at):
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Steps run as one NumPy computation") for c in captions), captions
    at.toggle(key="pg_compare").set_value(True).run()
    assert "Steps run in PyTorch: autograd itself trains while the engines are compared." in [
        c.value for c in at.caption
    ]


def test_bad_hidden_widths_keep_the_network(at):
    at.text_input(key="pg_hidden").input("16, banana").run()
    assert "not a whole number" in at.sidebar.error[0].value
    assert at.session_state["pg_run"].settings.hidden == (32, 32)


@pytest.mark.slow
def test_comparing_engines_shows_their_gap(at):
    at.toggle(key="pg_compare").set_value(True).run()
    for _ in range(3):
        at.button(key="pg_epoch").click().run()
    assert any(c.value.startswith("Engines side by side over 3 epochs") for c in at.caption)


def test_the_sidebar_has_l1_and_l2_rates_and_the_network_view_counts_zero_weights():
    lesson = LESSONS["l1-zeros"]
    at = open_page(PAGE, lesson.link())
    labels = {s.label: s.value for s in at.sidebar.select_slider}
    assert labels["L1 rate (λ₁)"] == 0.01 and labels["L2 rate (λ₂)"] == 0.0
    assert "proximal step" in at.select_slider(key="pg_l1").help
    assert "0 of 96 weights are exactly 0 (drawn dashed)." in [c.value for c in at.caption]
    for _ in range(5):
        at.button(key="pg_epoch").click().run()
    zeros = sum(int((layer.weight == 0).sum()) for layer in at.session_state["pg_run"].model.layers)
    assert zeros > 0 and f"{zeros} of 96 weights are exactly 0 (drawn dashed)." in [
        c.value for c in at.caption
    ]
    at.select_slider(key="pg_l2").set_value(0.1).run()
    assert at.session_state["pg_run"].trainer.cfg.l2 == 0.1 and query(at)["l2"] == "0.1"


def in_callback(app, handler, *args) -> None:
    """Call one of the plane's handlers as its callback would before the page reruns (with the
    session's state), then rerun the page."""
    state = SimpleNamespace(session_state=app.session_state)
    with mock.patch.object(panels, "st", state), mock.patch.object(touch, "st", state):
        handler(*args)
    app.run()
    assert not app.exception


def click_plane(app, x: float, y: float) -> None:
    """A click inside the plane's axes at (x, y): pages/ui/plane.py calls the page's plane_click."""
    in_callback(app, panels.plane_click, x, y)


def choose_tool(app, tool: str | None) -> None:
    """A press on the legend's class (or Erase) chip: pages/ui/plane.py calls touch.choose."""
    in_callback(app, touch.choose, tool)
    assert plane_data(app)["touch"]["chosen"] == (tool if tool in (None, "erase") else int(tool))


def test_a_click_adds_a_point_of_the_chosen_class_and_training_goes_on(at):
    at.button(key="pg_step").click().run()
    run, before = at.session_state["pg_run"], weights(at)
    n = len(plane_data(at)["points"]["train"])
    click_plane(at, 0.5, 0.5)  # no class chosen yet: a click does nothing
    assert len(plane_data(at)["points"]["train"]) == n and "pts" not in query(at)
    choose_tool(at, "2")
    click_plane(at, 0.5, -0.25)
    assert at.session_state["pg_run"] is run and all(
        torch.equal(a, b) for a, b in zip(before, weights(at), strict=True)
    )  # the same network, not reset
    assert plane_data(at)["points"]["train"][-1] == [0.5, -0.25, 2]
    assert plane_data(at)["touch"]["summary"] == f"{n + 1} train points (1 added)"
    assert query(at)["pts"] == "0.5_-0.25_2"
    at.button(key="pg_step").click().run()
    assert metric(at, "Step") == "2" and run.trainer.batches.n == n + 1
    choose_tool(at, None)  # the chip pressed again: clicks do nothing
    click_plane(at, 0.5, 0.5)
    assert len(run.edits.added) == 1


def test_erase_removes_the_points_near_a_click_and_the_link_follows(at):
    choose_tool(at, "0")
    click_plane(at, 1.2, 1.2)
    choose_tool(at, "erase")
    click_plane(at, 1.21, 1.19)
    run = at.session_state["pg_run"]
    assert run.edits.added == () and "pts" not in query(at)  # the added point went
    click_plane(at, 0.0, 0.0)
    assert run.edits.erased and query(at)["pts"].startswith("x")
    assert len(run.points.y_train) + len(run.points.y_test) == 600 - len(run.edits.erased)


def test_a_unit_on_the_plane_takes_the_click_first(at):
    choose_tool(at, "1")
    at.session_state["pg_focus"] = (1, 0)
    click_plane(at, 0.5, 0.5)
    assert at.session_state["pg_probe"] == (0.5, 0.5) and not at.session_state["pg_run"].edits


def test_a_link_with_points_opens_with_them_and_a_bad_one_warns():
    settings = PRESETS["moons"]
    at = open_page(PAGE, to_query(settings) | {"pts": "0.5_-0.25_1~x3-4"})
    run = at.session_state["pg_run"]
    assert run.settings == settings and run.edits.added == ((0.5, -0.25, 1),) and run.edits.erased == (3, 4)
    assert query(at)["pts"] == "0.5_-0.25_1~x3-4"
    bad = open_page(PAGE, to_query(settings) | {"pts": "0.5_-0.25_7"})
    assert "Ignored ` pts=0.5_-0.25_7 `: this data set's classes are 0 to 1." in [
        w.value for w in bad.warning
    ]
    assert bad.session_state["pg_run"].settings == settings and not bad.session_state["pg_run"].edits


def test_new_data_settings_start_without_the_clicks_points(at):
    choose_tool(at, "1")
    click_plane(at, 0.5, 0.5)
    at.button(key="pg_regen").click().run()  # new points
    assert not at.session_state["pg_run"].edits and "pts" not in query(at)


def test_clicks_on_an_uploaded_set_add_points_to_its_csv_not_to_the_link(at):
    rows = "".join(f"{i},{(i * 7) % 11},{i % 3}\n" for i in range(60))
    at.file_uploader(key="pg_upload").upload("mine.csv", ("x1,x2,label\n" + rows).encode(), "text/csv").run()
    choose_tool(at, "2")
    click_plane(at, 0.25, 0.75)
    run = at.session_state["pg_run"]
    assert run.points.name == "mine.csv" and len(run.points.y_train) == len(run.base.y_train) + 1
    assert "pts" not in query(at) and query(at)["data"] == "file"
    assert plane_data(at)["touch"]["summary"].endswith("(1 added); the CSV export keeps them, a link can't")
    (csv,) = [make() for label, make, _ in playground_files(run) if label == "Data (.csv)"]
    assert "0.25,0.75,2" in csv.splitlines()


def test_a_click_that_cannot_be_done_says_why(at):
    choose_tool(at, "erase")
    at.session_state["pg_run"].base.X_train[:] = 0  # every training point under one click
    click_plane(at, 0.0, 0.0)
    assert any("every training point" in t.value for t in at.toast)


def step_metric(page) -> int:
    return int(plane_metric(page, "Step").inner_text().replace(",", ""))


def plane_step(page) -> int:
    """The step of the frame the canvas drew last (-1 before any); the component's DOM is in a
    shadow root, which Playwright's locators enter and document.querySelector doesn't."""
    canvas = page.locator(".plane canvas")
    return int(canvas.get_attribute("data-step") or -1) if canvas.count() else -1


# The curves panel's lines as drawn (Plotly's SVG paths), all in one string: "" before any.
CURVES_JS = (
    "[...document.querySelectorAll('.st-key-pg_curves .scatterlayer path.js-line')]"
    ".map(p => p.getAttribute('d') ?? '').join(' ')"
)


def wait_for_plane(page, at_least: int, timeout: float = 120) -> int:
    """Wait until the canvas has drawn a frame of at least that step, then return its step."""
    deadline = time.monotonic() + timeout
    while (drawn := plane_step(page)) < at_least:
        assert time.monotonic() < deadline, f"the plane drew step {drawn}, not {at_least}, in {timeout} s"
        page.wait_for_timeout(100)
    return drawn


@pytest.mark.browser
def test_play_in_chromium_advances_and_redraws_then_pauses(page, app_url):
    fetched = frame_statuses(page)  # the frames the plane asked the server for, over its socket
    page.goto(f"{app_url}/playground")
    wait_for_app(page, heading="2D playground")
    assert wait_for_plane(page, 0) == 0 and step_metric(page) == 0
    page.get_by_role("button", name="Play").click()
    drawn = wait_for_plane(page, 30)  # the canvas redraws the boundary as the steps go by
    assert drawn >= 30 and step_metric(page) >= 30  # 100 steps a second, a few a frame alone
    assert len(fetched) >= 3 and set(fetched) == {200}  # the frames: asked for, not reruns
    # The slow panels redraw on their own timers meanwhile: the curves get lines, then longer ones.
    curves = page.wait_for_function(f"() => ({CURVES_JS}) || false").json_value()
    page.wait_for_function(f"drawn => ({CURVES_JS}) !== drawn", arg=curves)
    shoot(page, "playground-playing.png")
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Play").wait_for()  # the page has rerun, paused
    wait_for_app(page)
    paused = step_metric(page)
    page.wait_for_timeout(1500)  # watching for a change that must not come
    assert step_metric(page) == paused and plane_step(page) == paused
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "playground-paused.png")


@pytest.mark.browser
def test_without_a_frame_socket_the_canvas_asks_for_its_frames_over_http(page, app_url):
    assert PATH in NO_FRAME_SOCKET_JS
    page.add_init_script(NO_FRAME_SOCKET_JS)
    fetched = []
    page.on("response", lambda r: fetched.append(r.status) if PATH in r.url else None)
    page.goto(f"{app_url}/playground")
    wait_for_app(page, heading="2D playground")
    page.get_by_role("button", name="Play").click()
    assert wait_for_plane(page, 30) >= 30
    assert len(fetched) >= 3 and set(fetched) == {200}
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Play").wait_for()
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.browser
def test_discretize_output_in_chromium_redraws_the_plane_in_flat_regions(page, app_url):
    page.goto(f"{app_url}/playground")
    wait_for_app(page, heading="2D playground")
    canvas = page.locator(".st-key-pg_plane canvas")
    expect(canvas).to_have_attribute("data-discrete", "false")
    page.get_by_text("Discretize output").click()
    expect(canvas).to_have_attribute("data-discrete", "true")
    assert "discrete=True" in page.url
    page.get_by_role("button", name="Play").click()
    wait_for_plane(page, 20)  # frames that train keep the look
    expect(canvas).to_have_attribute("data-discrete", "true")
    page.get_by_role("button", name="Pause").click()


# How many weights the network view says are exactly 0 (-1 while it says nothing about them).
ZEROS_JS = (
    "() => { const m = [...document.querySelectorAll('[data-testid=\"stCaptionContainer\"]')]"
    ".map(e => e.innerText.match(/^([\\d,]+) of 96 weights are exactly 0/)).find(Boolean);"
    " return m ? Number(m[1].replace(/,/g, '')) : -1; }"
)


@pytest.mark.browser
def test_the_l1_lessons_link_shows_weights_reaching_exactly_zero_as_epochs_go_by(page, app_url):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/playground?{urlencode(LESSONS['l1-zeros'].link())}")
    wait_for_app(page, heading="2D playground")
    page.wait_for_function(f"() => ({ZEROS_JS})() === 0")  # L1 on, nothing at 0 yet: it says so
    for epoch in range(1, 6):
        page.get_by_role("button", name="Epoch").click()
        expect(plane_metric(page, "Epoch")).to_have_text(str(epoch))  # waits for the rerun's frame
    wait_for_app(page)
    zeros = page.wait_for_function(f"() => {{ const z = ({ZEROS_JS})(); return z > 0 && z; }}").json_value()
    assert 0 < zeros < 96
    shoot(page, "playground-l1-zeros.png")


@pytest.mark.browser
def test_hammering_the_buttons_while_playing_trains_exactly_as_a_run_alone(page, app_url, tmp_path):
    """Clicks during Play start full reruns while frames train: the run must never train twice at
    once. The weights downloaded afterwards equal those of the same link's run, trained alone."""
    settings = replace(PRESETS["moons"], batch_size=16, dropout=0.3)  # batches and dropout: RNGs at work
    page.goto(f"{app_url}/playground?" + urlencode(to_query(settings)))
    wait_for_app(page, heading="2D playground")

    # One button, two faces: while a rerun replaces one face with the other, both can be on the page
    # for a moment (the old one stale). Either will do for a click that piles onto a frame in flight.
    toggle = page.get_by_role("button", name=re.compile(r"^(Play|Pause)\b")).first  # its key's name follows
    for _ in range(4):
        page.get_by_role("button", name="Play").click()
        wait_for_plane(page, plane_step(page) + 1)  # at least one frame trained while playing
        for name in ("Step", None, "Epoch", None, "Step", None):  # without waiting for the page:
            button = toggle if name is None else page.get_by_role("button", name=re.compile(rf"^{name}\b"))
            button.click(no_wait_after=True)  # the clicks pile onto frames in flight
        wait_for_app(page)
        if page.get_by_role("button", name="Pause").count():
            page.get_by_role("button", name="Pause").click()
        page.get_by_role("button", name="Play").wait_for()
        wait_for_app(page)
    steps = step_metric(page)
    page.get_by_text("Export", exact=True).click()
    with page.expect_download() as download:
        page.get_by_role("button", name="Weights (.safetensors)").click()
    model, _ = model_from_bytes(Path(download.value.path()).read_bytes())
    alone = current_run(None, settings)
    alone.run(steps)
    assert steps > 0
    assert all(torch.equal(a, b) for a, b in zip(alone.model.parameters(), model.parameters(), strict=True))
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_regression_plays_in_chromium_with_r2_and_its_colour_scale(browser, app_url, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 720}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(90_000)
    try:
        page.goto(f"{app_url}/playground?{urlencode(PRESETS_LINK['regression'])}")
        wait_for_app(page, heading="2D playground")
        assert plane_metric(page, "Test R²").inner_text() == "–"
        scale = page.locator(".plane .legend .scale")
        assert scale.inner_text().replace("\n", "") == "−1+1" and "linear-gradient" in (
            scale.locator(".bar").get_attribute("style") or ""
        )
        assert "colour = value (output and label)" in page.locator(".plane .legend").inner_text()
        button(page, "Play").click()
        wait_for_plane(page, 30)
        button(page, "Pause").click()
        r2 = plane_metric(page, "Test R²").inner_text()
        assert r2 != "–" and -1 < float(r2.replace("−", "-")) <= 1
        page.locator(".plane .legend").scroll_into_view_if_needed()  # the plane and its colour bar
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / f"playground-regression-{scheme}.png"))
    finally:
        context.close()


def choose_preset(page, name: str) -> None:
    page.get_by_test_id("stSidebar").get_by_label("Preset").click()  # the select box opens its list
    page.get_by_role("option", name=name, exact=True).click()
    wait_for_app(page)


@pytest.mark.browser
def test_the_numbers_above_the_plane_follow_the_task_when_it_changes(page, app_url):
    from playwright.sync_api import expect

    page.goto(f"{app_url}/playground")
    wait_for_app(page, heading="2D playground")
    expect(plane_metric(page, "Test accuracy")).to_have_count(1)
    choose_preset(page, "regression")
    expect(plane_metric(page, "Test R²")).to_have_count(1)
    expect(plane_metric(page, "Test accuracy")).to_have_count(0)
    labels = [t.split("\n")[0] for t in plane_metrics(page)]
    assert labels == ["Epoch", "Step", "Train MSE", "Test MSE", "Test R²"]
    choose_preset(page, "moons")
    expect(plane_metric(page, "Test accuracy")).to_have_count(1)
    expect(plane_metric(page, "Test R²")).to_have_count(0)


@pytest.mark.browser
def test_the_frame_route_answers_only_a_live_sessions_token(app_url):
    for token in ("guessed", "", "x" * 5000):  # in a header, so that no access log keeps it
        asked = urllib.request.Request(f"{app_url}{PATH}?stream={token}", headers={TOKEN_HEADER: token})
        with pytest.raises(urllib.error.HTTPError) as gone:
            urllib.request.urlopen(asked, timeout=30)
        assert gone.value.code == 410 and json.loads(gone.value.read()) == {"error": GONE}
    post = urllib.request.Request(f"{app_url}{PATH}", data=b"", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:  # it only reads
        urllib.request.urlopen(post, timeout=30)
    assert refused.value.code == 405


SHORT_LEASE = 8.0  # the lease test's server: the default 90 s would be most of its run


@pytest.fixture
def short_lease_url(browser):
    with serve_app("short-lease.log", env={"MLP_PLAYGROUND_LEASE_SECONDS": str(SHORT_LEASE)}) as url:
        yield url


@pytest.mark.browser
def test_a_closed_tabs_token_stops_training_within_the_lease(browser, short_lease_url):
    """A playing page's frame socket renews its stream's lease; once the tab is closed nothing
    does, and a replay of what it sent (its token and its key, over a socket of its own) gets
    no frames past the lease ($MLP_PLAYGROUND_LEASE_SECONDS, 8 s here), nor does the token over HTTP."""
    from websockets.sync.client import connect

    app_url = short_lease_url
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    sent = []  # what the canvas sends over its frame socket, one message a frame: "token key"
    tab.on(
        "websocket",
        lambda ws: ws.on("framesent", lambda message: sent.append(message)) if PATH in ws.url else None,
    )
    tab.goto(f"{app_url}/playground?epochs=100000")
    wait_for_app(tab, heading="2D playground")
    tab.get_by_role("button", name="Play").click()
    wait_for_plane(tab, 20)
    assert all(len(message.split(" ")) == 2 for message in sent)  # the key the page gave, with each
    context.close()  # the tab goes; what it sent is replayed from elsewhere
    closed, message = time.monotonic(), sent[-1]
    steps = []
    with connect(app_url.replace("http", "ws", 1) + PATH) as replay:
        while True:
            assert time.monotonic() < closed + SHORT_LEASE + 30, "the replayed token kept training"
            replay.send(message)
            frame = json.loads(replay.recv(timeout=30))
            if frame["status"] == 429:  # the closed tab's last frame may be in flight still
                time.sleep(0.1)
                continue
            if not frame.get("playing", True) and "step" not in frame:
                break
            steps.append(frame["step"])
    stopped = time.monotonic() - closed
    print(f"the replayed token got {len(steps)} frames, then stopped {stopped:.1f} s after the tab closed")
    assert stopped <= SHORT_LEASE + 2  # the lease was renewed at most when the tab closed
    assert steps == sorted(steps) and steps  # frames were still training until then: a real replay
    asked = urllib.request.Request(f"{app_url}{PATH}", headers={TOKEN_HEADER: message.split(" ")[0]})
    with urllib.request.urlopen(asked, timeout=30) as answer:
        assert json.loads(answer.read()) == {"playing": False}  # nor over HTTP


# Where a point of the plane is on the canvas, in CSS pixels from its corner: pages/ui/plane.py's
# layout (the axes inset by 2.6 em on the left, 0.4 em on top and right, 2.4 em at the bottom).
PLANE_TO_CANVAS_JS = """(canvas, [x, y]) => {
  const em = parseFloat(getComputedStyle(canvas.closest('.plane')).fontSize), size = canvas.clientWidth;
  const [x0, x1, y0, y1] = canvas.dataset.extent.split(' ').map(Number);
  const left = 2.6 * em, top = 0.4 * em, w = size - 3 * em, h = size - 2.8 * em;
  return { x: left + ((x - x0) / (x1 - x0)) * w, y: top + ((y1 - y) / (y1 - y0)) * h };
}"""


ADDED_IN_LINK_JS = """(n) => (new URLSearchParams(location.search).get('pts') || '')
  .split('~').filter((p) => p && !p.startsWith('x')).length === n"""


def click_on_plane(page, x: float, y: float) -> None:
    canvas = page.locator("canvas[data-extent]")
    canvas.click(position=canvas.evaluate(PLANE_TO_CANVAS_JS, [x, y]))


def added_points(page) -> list[tuple[float, float, int]]:
    """The points the address bar's link carries as added (pts=x1_x2_class~…)."""
    found = re.search(r"[?&]pts=([^&]*)", page.url)
    parts = found.group(1).split("~") if found else []
    return [
        (float(a), float(b), int(c)) for a, b, c in (p.split("_") for p in parts if not p.startswith("x"))
    ]


@pytest.mark.browser
def test_clicks_in_chromium_add_and_erase_points_while_training_goes_on(page, app_url):
    from playwright.sync_api import expect

    settings = replace(PRESETS["moons"], speed=10)
    page.goto(f"{app_url}/playground?" + urlencode(to_query(settings)))
    wait_for_app(page, heading="2D playground")
    legend = page.locator(".plane .legend")
    chip = legend.get_by_role("button", name="class 1")
    chip.click()
    expect(chip).to_have_attribute("aria-pressed", "true")
    wait_for_app(page)
    click_on_plane(page, 1.0, -1.0)
    expect(legend.locator(".summary")).to_have_text("321 train points (1 added)")  # moons: 320 of 400
    page.wait_for_function(ADDED_IN_LINK_JS, arg=1)
    ((x, y, label),) = added_points(page)
    assert abs(x - 1.0) <= 0.02 and abs(y + 1.0) <= 0.02 and label == 1  # where the pointer was

    # Training goes on while points are added: the plane keeps drawing newer steps.
    button(page, "Play").click()
    drawn = wait_for_plane(page, 20)
    click_on_plane(page, -1.0, 1.0)
    expect(legend.locator(".summary")).to_have_text("322 train points (2 added)")
    wait_for_plane(page, drawn + 20)
    page.wait_for_function(ADDED_IN_LINK_JS, arg=2)
    shoot(page, "playground-touch.png")
    button(page, "Pause").click()
    button(page, "Play").wait_for()
    wait_for_app(page)

    erase = legend.get_by_role("button", name="Erase")
    erase.click()
    expect(erase).to_have_attribute("aria-pressed", "true")
    expect(chip).to_have_attribute("aria-pressed", "false")
    wait_for_app(page)
    click_on_plane(page, 1.0, -1.0)
    expect(legend.locator(".summary")).to_contain_text("(1 added")
    page.wait_for_function(ADDED_IN_LINK_JS, arg=1)
    assert [p[2] for p in added_points(page)] == [1] and added_points(page)[0][0] < 0  # the other one stays
    assert page.locator('[data-testid="stException"]').count() == 0

    # The link opens the same set in a fresh tab.
    summary = legend.locator(".summary").inner_text()
    fresh = page.context.new_page()
    fresh.goto(page.url)
    wait_for_app(fresh, heading="2D playground")
    expect(fresh.locator(".plane .legend .summary")).to_have_text(summary)
    fresh.close()


def test_a_unit_on_the_plane_shows_its_map_and_its_computation_at_a_clicked_point(at):
    at.button(key="pg_step").click().run()
    assert plane_data(at)["frame"]["focus"] == "" and plane_data(at)["frame"]["view"] == ""
    at.session_state["pg_focus"] = (1, 2)  # what a click on layer 1's unit 3 sets (pages/ui/units.py)
    at.run()
    frame = plane_data(at)["frame"]
    assert frame["focus"] == "1,2" and frame["view"].startswith("Layer 1, unit 3: its output a over")
    assert any("Click a point on the plane" in c.value for c in at.caption) and not at.latex
    at.session_state["pg_probe"] = (0.5, -0.25)  # what a click on the plane then stores
    at.run()
    assert not at.exception
    run = at.session_state["pg_run"]
    with torch.inference_mode():
        x = torch.tensor([[0.5, -0.25]])
        a = run.model.activations(x)[0][0, 2].item()
    z_line, a_line, output = (e.value.strip("$\n") for e in at.latex)
    assert z_line.startswith("\\begin{aligned} z &= \\underbrace{")
    assert "_{x_1}" in z_line and "_{b}" in z_line
    assert a_line.endswith(f"= {a:.3f}") and "relu" in a_line
    assert output.startswith("\\begin{aligned} z &= (")
    assert plane_data(at)["probe"] == [0.5, -0.25]
    at.button(key="pg_show_output").click().run()
    assert plane_data(at)["frame"]["focus"] == "" and at.session_state["pg_probe"] is None and not at.latex


def test_a_weight_set_by_hand_moves_the_loss_at_once_and_reset_brings_it_back(at):
    at.button(key="pg_epoch").click().run()
    before = metric(at, "Train loss")
    run = at.session_state["pg_run"]
    trained = run.model.layers[1].weight.detach()[0, 1].item()
    at.session_state["pg_edge"] = (2, 0, 1)  # what a click on an edge sets (pages/ui/units.py)
    at.session_state["pg_weight_text"] = f"{trained:.4f}"
    at.run()
    assert any(m.value.startswith("**Weight from layer 1, unit 2 to layer 2, unit 1**") for m in at.markdown)
    for bad in ("lots", "nan", "1e6"):  # a sentence, and nothing lost
        at.text_input(key="pg_weight_text").set_value(bad).run()
        at.button(key="pg_weight_apply").click().run()
        assert at.error and "number" in at.error[0].value and not at.exception
        assert run.model.layers[1].weight.detach()[0, 1].item() == trained
    at.text_input(key="pg_weight_text").set_value("4.5").run()
    at.button(key="pg_weight_apply").click().run()
    assert run.model.layers[1].weight.detach()[0, 1].item() == 4.5 and not at.error
    assert metric(at, "Train loss") != before  # measured anew, paused
    at.button(key="pg_weight_reset").click().run()
    assert run.model.layers[1].weight.detach()[0, 1].item() == trained
    assert at.text_input(key="pg_weight_text").value == f"{trained:.4f}"
    at.button(key="pg_step").click().run()
    at.button(key="pg_weight_close").click().run()
    assert not at.session_state["pg_edge"]


# In the page: the middle of the network view's clear line for an edge where a click lands on it
# (and on no other edge or unit drawn over it), in the page's coordinates; null if nowhere.
EDGE_POINT_JS = """(line) => {
  const box = line.ownerSVGElement.getScreenCTM();
  const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map((a) => line[a].baseVal.value);
  for (const t of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8]) {
    const p = new DOMPoint(x1 + t * (x2 - x1), y1 + t * (y2 - y1)).matrixTransform(box);
    if (document.elementFromPoint(p.x, p.y) === line) return [p.x, p.y];
  }
  return null;
}"""


def edge_point(page, edge: str) -> list[float]:
    """Where a click reaches the network view's `edge` ("layer,from,to"), once one does: on a busy
    machine the view may still be going in after its rerun (a point was once found on none)."""
    reach = f"(at) => {{ const line = document.querySelector(at); return line && ({EDGE_POINT_JS})(line); }}"
    return page.wait_for_function(reach, arg=f'.mlp-net .edge[data-edge="{edge}"]').json_value()


@pytest.mark.parametrize(  # each theme and each mode once: clicks land the same in either theme
    ("present", "scheme"), [("", "light"), ("?present=1", "dark")]
)
@pytest.mark.browser
def test_in_chromium_a_clicked_unit_goes_on_the_plane_and_a_clicked_edge_sets_a_weight(
    browser, app_url, scheme, present
):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 720}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(90_000)
    tag = f"{scheme}{'-present' if present else ''}"
    try:
        page.goto(f"{app_url}/playground{present}")
        wait_for_app(page, heading="2D playground")
        page.get_by_role("button", name="Epoch").click()
        wait_for_plane(page, 1)
        canvas = page.locator(".plane canvas")
        # A unit: on the plane, large, with what it is; the plane is its map now.
        page.locator('.mlp-net .unit[data-layer="1"][data-unit="2"]').click()
        expect(canvas).to_have_attribute("data-focus", "1,2")
        expect(page.locator(".plane .view")).to_contain_text("Layer 1, unit 3: its output a over the plane")
        expect(page.locator('.mlp-net .unit[aria-pressed="true"]')).to_have_attribute(
            "aria-label", "layer 1, unit 3"
        )
        # A point on the plane: the unit's computation there, with its numbers.
        box = canvas.bounding_box()
        page.mouse.click(box["x"] + 0.6 * box["width"], box["y"] + 0.4 * box["height"])
        math = page.locator(".st-key-pg_unit_math .katex-html")
        expect(math.first).to_contain_text("z=")
        expect(page.locator(".st-key-pg_unit_math")).to_contain_text("layer 1, unit 3 at (x1, x2) = (")
        page.screenshot(path=str(ARTIFACTS / f"playground-unit-{tag}.png"))
        assert not (found := axe_findings(page)), report(found)  # the units as buttons, the math
        shoot(page, f"playground-unit-full-{tag}.png", width=1280)
        # Playing, the plane goes on showing the unit as it trains.
        page.get_by_role("button", name="Play").click()
        wait_for_plane(page, plane_step(page) + 1)
        expect(canvas).to_have_attribute("data-focus", "1,2")
        page.get_by_role("button", name="Pause").click()
        page.get_by_role("button", name="Play").wait_for()
        wait_for_app(page)
        # The keyboard: a unit is a button; Enter takes it off the plane again.
        page.locator('.mlp-net .unit[data-layer="1"][data-unit="2"]').focus()
        page.keyboard.press("Enter")
        expect(canvas).to_have_attribute("data-focus", "")
        expect(page.locator(".plane .view")).to_have_text("")
        # An edge: its weight, typed; the loss moves at once, paused; Reset puts the weight back.
        loss = plane_metric(page, "Train loss")
        before = loss.inner_text()
        page.mouse.click(*edge_point(page, "1,0,0"))  # from x1: no dead unit's weight
        editor = page.locator(".st-key-pg_weight")
        expect(editor).to_contain_text("Weight from x1 to layer 1, unit 1")
        # The box is filled with the weight on the same run, but may be drawn a moment later.
        expect(page.get_by_label("New value")).not_to_have_value("")
        trained = page.get_by_label("New value").input_value()
        expect(editor).to_contain_text(f"unit 1 = {trained}")
        page.get_by_label("New value").fill("oops")
        page.get_by_role("button", name="Apply").click()
        expect(editor).to_contain_text("is not one")
        assert loss.inner_text() == before
        page.get_by_label("New value").fill("9")
        page.get_by_role("button", name="Apply").click()
        expect(loss).not_to_have_text(before)
        expect(editor).to_contain_text(f"= 9.0000 (trained value {trained})")
        page.screenshot(path=str(ARTIFACTS / f"playground-weight-{tag}.png"))
        assert not (found := axe_findings(page)), report(found)
        page.get_by_role("button", name="Reset to trained value").click()
        expect(page.get_by_label("New value")).to_have_value(trained)
        expect(loss).to_have_text(before)  # no step since: the trained weights and their numbers
        expect(editor).to_contain_text(f"= {trained}")
        assert page.locator('[data-testid="stException"]').count() == 0
    except BaseException:
        shoot(page, f"FAILED-units-{tag}.png", width=1280)
        raise
    finally:
        context.close()


def test_the_look_closer_box_is_a_keyboards_way_to_put_a_unit_on_the_plane(at):
    at.selectbox(key="pg_unit").set_value((2, 3)).run()
    assert not at.exception and at.session_state["pg_focus"] == (2, 3)
    assert plane_data(at)["frame"]["focus"] == "2,3"
    options = at.selectbox(key="pg_unit_weight").options  # ...and to its weights
    assert options[:2] == ["from layer 1, unit 1", "from layer 1, unit 2"]
    at.selectbox(key="pg_unit_weight").set_value(1).run()
    assert at.session_state["pg_edge"] == (2, 3, 1) and at.text_input(key="pg_weight_text").value
