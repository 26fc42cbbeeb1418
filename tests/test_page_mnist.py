"""The MNIST page: AppTest trains, stops, loads and refuses; Chromium trains and draws."""

import os
import re

import numpy as np
import pytest
import torch

from mlp.io import model_to_bytes
from mlp.runs.exports import mnist_files
from tests.conftest import open_page, shoot, wait_for_app

PAGE = "pages/mnist.py"


@pytest.fixture
def at():
    return open_page(PAGE)


def metric(app, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def table(app, column: str):
    """The page's table that has `column`, wherever it sits on the page."""
    return next(d.value for d in app.dataframe if column in d.value.columns)


def open_tab(app, name: str) -> None:
    """Open one of the lazy tabs under the run (only the open tab's content runs)."""
    app.session_state["mn_tab"] = name
    app.run()


def train(app, epochs: int = 2) -> None:
    """Start a run and wait (for its background job, not for time) until the page shows it ended."""
    app.number_input(key="mn_epochs").set_value(epochs).run()
    app.button(key="mn_start").click().run()
    session = app.session_state["mn_session"]
    assert session.job.wait(timeout=300), "training did not finish"
    app.run()  # the page's next poll: it collects the run and shows the evaluation
    assert not session.running


def test_the_page_says_where_the_digits_come_from_in_one_line_without_paths(at):
    banner = [i.value for i in at.info if "bundled sample" in i.value]
    assert banner == ["The bundled sample of real MNIST: 4,000 training and 1,000 test digits."]
    assert at.button(key="mn_download").label.startswith("Download the full MNIST")
    shown = [e.value for kind in (at.info, at.caption, at.markdown, at.success) for e in kind]
    home = os.path.expanduser("~")
    assert not any(home in text or os.environ["MLP_PLAYGROUND_DATA"] in text for text in shown)
    assert any("cpu" in c.value and "CPU thread" in c.value for c in at.sidebar.caption)


@pytest.mark.slow
def test_a_tiny_training_run_shows_its_metrics_and_figures(at):
    train(at, epochs=2)
    assert not at.exception
    assert metric(at, "Epoch") == "2.00 / 2"
    assert float(metric(at, "Test accuracy").rstrip("%")) > 70
    assert metric(at, "Val. accuracy").endswith("%") and metric(at, "Samples / s") != "–"
    assert len(at.get("plotly_chart")) == 2  # the curves, the confusion matrix: the open tab's only
    per_digit = table(at, "recall")
    assert list(per_digit["class"]) == list(range(10))
    assert len(at.session_state["mn_session"].runs) == 1
    at.session_state["mn_tab"] = "Compare runs"  # lazy tabs: another one's content runs when opened
    at.run()
    assert table(at, "run")["run"].tolist() == ["run 1"] and len(at.get("plotly_chart")) == 2
    at.session_state["mn_tab"] = "Try it"
    at.run()
    assert at.number_input(key="mn_pick").label == "Test digit number"  # a test digit and its guess


@pytest.mark.slow
def test_a_downloaded_model_loads_back_with_identical_predictions(at):
    train(at, epochs=1)
    trained = at.session_state["mn_session"].run
    open_tab(at, "Keep it")
    at.file_uploader(key="mn_model_file").upload("mine.safetensors", model_to_bytes(trained.model)).run()
    assert not at.exception
    loaded = at.session_state["mn_session"].run
    assert loaded is not trained and loaded.name == "mine.safetensors"
    for name, weight in trained.model.state_dict().items():  # the very same numbers
        assert torch.equal(weight, loaded.model.state_dict()[name])
    # The same predictions (float rounding aside: the worker and the page may use other thread counts).
    assert np.allclose(loaded.evaluation.probs, trained.evaluation.probs, atol=1e-6)
    assert (loaded.evaluation.predicted == trained.evaluation.predicted).all()


@pytest.mark.slow
def test_a_loaded_model_shows_as_what_it_is_not_as_a_run(at):
    at.selectbox(key="mn_optimizer").set_value("sgd").run()
    train(at, epochs=1)
    weights = mnist_files(at.session_state["mn_session"].run)[0][1]()  # the page's own download
    open_tab(at, "Keep it")
    at.file_uploader(key="mn_model_file").upload("mine.safetensors", weights).run()
    assert not at.exception
    said = [i.value for i in at.info if i.value.startswith("Loaded from ` mine.safetensors `:")]
    assert (
        said and "784 → 128 → 10" in said[0] and "optimizer sgd" in said[0] and "epochs trained 1" in said[0]
    )
    assert not any("step 0 of" in (p.proto.text or "") for p in at.get("progress"))  # no fake progress
    assert at.session_state["mn_session"].runs[-1].settings["optimizer"] == "sgd"  # Compare says so too


def test_a_file_without_a_training_record_says_so():
    from mlp.lessons.mnist import loaded_sentence
    from mlp.model import MLP

    config = MLP(784, [32], 10).config
    assert "does not record how it was trained" in loaded_sentence(config, None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"garbage bytes, not a model", "header is missing or damaged"),
        (None, "takes 2 inputs; this page needs 784"),
    ],
)
def test_a_file_that_is_not_an_mnist_model_is_refused(at, content, message):
    if content is None:
        from mlp.model import MLP

        content = model_to_bytes(MLP(2, [8], 3))
    open_tab(at, "Keep it")
    at.file_uploader(key="mn_model_file").upload("bad.safetensors", content).run()
    assert not at.exception
    assert any(message in e.value for e in at.error)
    assert at.session_state["mn_session"].run is None


@pytest.mark.slow
def test_a_non_image_is_refused_in_try_it(at):
    train(at, epochs=1)
    open_tab(at, "Try it")
    at.file_uploader(key="mn_image").upload("notes.txt", b"not a picture").run()
    assert any("not an image" in e.value for e in at.error)


def set_epochs(page, epochs: int) -> None:
    box = page.get_by_test_id("stSidebar").get_by_test_id("stNumberInput").first.locator("input")
    box.fill(str(epochs))
    box.press("Enter")
    wait_for_app(page)


@pytest.mark.browser
def test_train_in_chromium_then_draw_a_digit(page, app_url):
    page.goto(f"{app_url}/mnist")
    wait_for_app(page, heading="MNIST")
    set_epochs(page, 4)
    page.get_by_role("button", name="Start").click()
    page.get_by_text("Samples / s").wait_for()
    page.wait_for_selector(".js-plotly-plot", timeout=60_000)
    shoot(page, "mnist-training.png")
    page.get_by_text("Test accuracy").first.wait_for(timeout=300_000)  # training ended, evaluation shown
    wait_for_app(page)
    assert "%" in page.get_by_test_id("stMetric").filter(has_text="Test accuracy").first.inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "mnist-evaluated.png")

    page.get_by_role("tab", name="Try it").click()  # a lazy tab: its content comes with a rerun
    canvas = page.locator("canvas[aria-label^='Drawing pad']")
    canvas.wait_for()
    wait_for_app(page)
    canvas.scroll_into_view_if_needed()  # the mouse draws at viewport coordinates
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.2)
    page.mouse.down()
    for i in range(1, 11):  # a vertical stroke: a one
        page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * (0.2 + 0.06 * i))
    page.mouse.up()
    page.get_by_text("what the network sees").wait_for(timeout=30_000)
    wait_for_app(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "mnist-draw.png")


@pytest.mark.browser
def test_a_run_trains_on_while_its_visitor_looks_at_another_page_then_stops(page, app_url):
    page.goto(f"{app_url}/mnist?hidden=512-512&epochs=100&bs=16")  # a long run: minutes here
    wait_for_app(page, heading="MNIST")
    page.get_by_role("button", name="Start").click()
    page.get_by_test_id("stProgress").get_by_text(re.compile("running")).wait_for()
    sidebar = page.get_by_test_id("stSidebar")
    nav = page.get_by_test_id("stSidebarNavItems")  # st.navigation's entries in the sidebar
    nav.get_by_role("link", name="Home").click()
    wait_for_app(page, heading="MLP Playground")
    line = sidebar.get_by_text(re.compile(r"MNIST: run 1 training, epoch \d+/100"))
    line.wait_for(timeout=60_000)
    first = int(re.search(r"epoch (\d+)/", line.inner_text()).group(1))
    page.get_by_role("heading", name="MLP Playground").wait_for()
    sidebar.get_by_text(re.compile(rf"epoch (?!{first}/)\d+/100")).wait_for(timeout=120_000)  # it goes on
    nav.get_by_role("link", name="MNIST").click()
    page.get_by_role("heading", name="MNIST").wait_for()  # (not wait_for_app: the page follows the run)
    progress = page.get_by_test_id("stProgress")
    progress.get_by_text(re.compile("running")).wait_for()  # the same run, live
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop").click()
    page.get_by_text("Test accuracy").first.wait_for(timeout=60_000)
    progress.get_by_text(re.compile("stopped")).wait_for()
    assert sidebar.get_by_text("MNIST: run 1 training").count() == 0
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.browser
def test_the_largest_model_file_passes_the_uploader_in_chromium(page, app_url, tmp_path):
    """The browser counts the uploader's limit in MB (10^6 bytes), the server in MiB: a 56.9 MB
    file of 784-2048×4-10, with a training record as the page writes it, passes both."""
    from mlp.lessons.mnist import LARGEST
    from mlp.model import MLP

    record = {"optimizer": "adam", "lr": 0.001, "batch_size": 128, "epochs": 100, "epochs_trained": 100.0}
    data = model_to_bytes(MLP.from_config(LARGEST), test_accuracy=0.98, training=record)
    assert len(data) > 56 * 10**6
    page.goto(f"{app_url}/mnist")
    wait_for_app(page, heading="MNIST")
    page.get_by_role("tab", name="Keep it").click()
    uploader = page.get_by_test_id("stFileUploader")
    uploader.wait_for()
    wait_for_app(page)
    path = tmp_path / "largest.safetensors"  # (Playwright hands over at most 50 MB from memory)
    path.write_bytes(data)
    uploader.locator("input[type=file]").set_input_files(path)
    refused = page.get_by_text(re.compile(r"File must be .* or smaller"))  # the browser's own check
    page.get_by_text("Loaded from").or_(refused).first.wait_for(timeout=120_000)
    assert refused.count() == 0, refused.first.inner_text()
    page.get_by_text(re.compile(r"784 → 2048 → 2048 → 2048 → 2048 → 10")).first.wait_for()
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.slow
def test_a_run_from_before_a_challenge_was_chosen_keeps_its_own_digits_and_says_why_it_doesnt_count(at):
    train(at, epochs=1)
    at.selectbox(key="mn_challenge").set_value("mnist-10k").run()  # chosen after the run
    assert not at.exception  # its evaluation is on its own 1,000 digits, not the challenge's 700
    assert any("tested on all 1,000 test digits" in c.value for c in at.caption)
    open_tab(at, "Evaluate")
    assert not at.exception
    assert at.session_state["mn_session"].run.data.n_test == 1000
    assert any(m.label == "Test accuracy" and "1,000" in (m.help or "") for m in at.metric)
