"""mlp.figures: every figure the app builds, validated once by plotly; frames stay light."""

import base64
import inspect
import io
import json
import struct
import zlib

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import mlp.figures.classes
import mlp.figures.curves
import mlp.figures.plane
import mlp.figures.tensors
from mlp.data import load_sample
from mlp.figures.classes import confusion_figure, probability_bars
from mlp.figures.curves import compare_figure, epoch_curves_figure, live_curves_figure, lr_figure
from mlp.figures.plane import (
    MAX_SHADE,
    SHADE_LEVELS,
    Shade,
    boundary_image,
    boundary_rgba,
    neurons_image,
    plane_view,
    shade_png,
    value_rgba,
)
from mlp.figures.style import RGB, for_presenter, png_data_uri
from mlp.figures.tensors import spread_figure, tensor_heatmap
from mlp.lessons.init_spread import activation_spread
from mlp.lessons.mnist import MnistSettings
from mlp.lessons.playground import PRESETS
from mlp.runs.mnist import MnistRun
from mlp.runs.playground import current_run

FIGURE_MODULES = (mlp.figures.classes, mlp.figures.curves, mlp.figures.plane, mlp.figures.tensors)
# Redrawn every frame, so built without validation (mlp.figures.style.fast_figure).
FRAME_FIGURES = {"confusion_figure", "loss_accuracy_figure", "lr_figure"}


@pytest.fixture(scope="module")
def built() -> dict[str, list[go.Figure]]:
    """Every public figure function, called on what the pages give it."""
    run = current_run(None, PRESETS["spiral"])
    run.compare(True)
    run.run(20)
    mnist = MnistRun(load_sample(), MnistSettings(epochs=1, batch_size=256, device="cpu"))
    mnist.advance(10)
    mnist.finish()
    view = mnist.view()
    evaluation = view.evaluation
    return {
        "epoch_curves_figure": [epoch_curves_figure(run.view.curves(), run.view.twin_curves())],
        "confusion_figure": [confusion_figure(run.view.confusion()), confusion_figure(evaluation.confusion)],
        "live_curves_figure": [live_curves_figure(**view.curves)],
        "lr_figure": [lr_figure(*view.schedule, view.epoch)],
        "probability_bars": [probability_bars(evaluation.probs[0])],
        "compare_figure": [compare_figure([mnist.summary()])],
        "tensor_heatmap": [tensor_heatmap(np.arange(12.0).reshape(3, 4) - 6, "z1", ("N", "h1"))],
        "spread_figure": [spread_figure(activation_spread(depth=4, width=64), "relu")],
    }


@pytest.mark.slow
def test_every_public_figure_is_built_here(built):
    public = {
        name
        for module in FIGURE_MODULES
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if fn.__module__ == module.__name__
        and not name.startswith("_")
        and "go.Figure" in str(fn.__annotations__)
    }
    public.discard("loss_accuracy_figure")  # drawn through epoch_curves_figure and live_curves_figure
    assert public == set(built)


@pytest.mark.slow
def test_every_figure_is_valid_plotly(built):
    for figures in built.values():
        for fig in figures:
            go.Figure(fig.to_dict())  # full validation: raises on any property plotly doesn't know


def test_only_frame_figures_skip_validation():
    for module in FIGURE_MODULES:
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if fn.__module__ == module.__name__ and "fast_figure(" in inspect.getsource(fn):
                assert name in FRAME_FIGURES, f"{name} is not redrawn every frame: build it validated"


@pytest.mark.slow
def test_a_playground_frame_stays_light(built):
    frame = [*built["epoch_curves_figure"], built["confusion_figure"][0]]
    total = sum(len(pio.to_json(fig.to_dict(), validate=False)) for fig in frame)
    assert total < 100 * 1024


def test_png_encoder_writes_a_real_png():
    rgba = np.zeros((3, 2, 4), dtype=np.uint8)
    rgba[1, 0] = [10, 20, 30, 255]
    data = base64.b64decode(png_data_uri(rgba).split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (2, 3)
    idat = data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8]
    raw = zlib.decompress(idat)
    assert len(raw) == 3 * (1 + 2 * 4) and raw[1 + 2 * 4 + 1 : 1 + 2 * 4 + 5] == bytes([10, 20, 30, 255])


def test_the_plane_is_plain_data_a_canvas_can_draw():
    run = current_run(None, PRESETS["spiral"])
    run.run(20)
    view = plane_view(run.view.grid_probs(), run.points)
    encoded = json.dumps(view)  # what the component receives
    assert len(encoded) < 40 * 1024
    png = base64.b64decode(view["image"].split(",", 1)[1])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", png[16:24]) == (100, 100)
    assert len(view["train"]) == len(run.points.y_train) and len(view["test"]) == len(run.points.y_test)
    assert view["xticks"] == [-1.0, 0.0, 1.0] and view["extent"] == list(run.points.extent)
    assert plane_view(run.view.grid_probs(), run.points, show_test=False)["test"] == []


def test_a_discretized_boundary_keeps_the_regions_and_drops_the_shading():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), size=(20, 20))  # sure and unsure cells alike
    shaded, discrete = boundary_rgba(probs), boundary_rgba(probs, discrete=True)
    assert (discrete[..., :3] == shaded[..., :3]).all()  # the same class in every cell
    assert len(np.unique(shaded[..., 3])) > 10  # shaded: as opaque as the network is sure
    assert set(np.unique(discrete[..., 3])) == {round(255 * MAX_SHADE)}  # discrete: one opacity
    assert discrete[..., 3].min() >= shaded[..., 3].max()


def test_unit_maps_are_images_scaled_pixel_for_pixel():
    units = np.linspace(-1, 1, 2 * 4 * 4).reshape(2, 4, 4)
    image = neurons_image(units, per_row=2, pixels=3)
    assert image.dtype == np.uint8 and image.shape == ((4 + 3 - 3) * 3, (2 * (4 + 3) - 3) * 3, 4)
    assert (image[:3, :3] == image[0, 0]).all()  # each map pixel is a 3 × 3 block


@pytest.mark.parametrize(
    ("losses", "labels"),
    [
        ([], ["0.01", "0.1", "1", "10"]),  # an empty chart: a readable range, not smeared labels
        ([np.array([2.3, 0.4, 0.05])], ["0.01", "0.1", "1", "10"]),
        ([np.array([1.1, 4e4, np.nan, np.inf])], ["1", "10", "100", "1000", "10000", "100000"]),
    ],
)
def test_the_loss_axis_is_labelled_at_whole_decades_only(losses, labels):
    axis = mlp.figures.curves.log_ticks(losses)
    assert axis["type"] == "log" and axis["ticktext"] == labels
    assert axis["tickvals"] == [float(t) for t in labels]  # no minor "2" or "5" labels to misread


def test_a_long_loss_range_keeps_a_few_labels():
    axis = mlp.figures.curves.log_ticks([np.array([1e-6, 1e8])])
    assert 4 <= len(axis["ticktext"]) <= 6


def test_each_curve_panel_says_what_it_shows_and_its_units():
    fig = live_curves_figure(
        **{
            p: dict.fromkeys(("epoch", "train_loss", "train_acc", "val_loss", "val_acc"), ())
            for p in ("train", "val")
        }
    )
    titles = [a.text for a in fig.layout.annotations]
    assert any("Loss" in t for t in titles) and any("Accuracy" in t for t in titles)
    assert "log scale" in fig.layout.yaxis.title.text and fig.layout.yaxis2.tickformat == ".0%"
    assert fig.layout.yaxis2.title.text is None  # no axis title between the panels to overlap the loss
    assert fig.layout.legend.y < 0  # the legend below the panels, clear of their titles


@pytest.mark.slow
def test_presenter_mode_sets_every_chart_text_to_at_least_18_px(built):
    for name, figures in built.items():
        for fig in figures:
            big = for_presenter(go.Figure(fig))
            assert big.layout.font.size >= 18, name
            for axis in [*big.select_xaxes(), *big.select_yaxes()]:
                assert axis.tickfont.size >= 18 and axis.title.font.size >= 18, name
            assert all(a.font.size >= 18 for a in big.layout.annotations), name


def test_probability_bars_label_every_digit_with_readable_percentages():
    probs = np.full(10, 0.01)
    probs[7] = 0.91
    fig = probability_bars(probs)
    assert list(fig.layout.xaxis.tickvals) == [str(d) for d in range(10)]  # the winning 7 included
    assert fig.data[0].textfont.size >= 16 and fig.data[0].text[7] == "91%"
    # In a narrow column plotly would shrink the text to the bars' width: it keeps 16 px, and only
    # the two likeliest digits carry one, so that neighbours' labels don't run into each other.
    assert fig.layout.uniformtext.minsize >= 16 and fig.layout.uniformtext.mode == "show"
    assert sum(bool(t) for t in fig.data[0].text) == 2


@pytest.mark.parametrize("shape", [(3, 4), (4,), (60, 200)])
def test_heatmaps_index_rows_and_columns_by_whole_numbers(shape):
    fig = tensor_heatmap(np.arange(np.prod(shape), dtype=float).reshape(shape) - 5, "z", ())
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.tickformat == "d" and axis.tick0 == 0 and float(axis.dtick).is_integer()
    assert fig.data[0].colorbar.nticks <= 4


@pytest.mark.slow
def test_every_figure_says_what_to_look_at_and_labels_its_axes(built):
    for name, figures in built.items():
        for fig in figures:
            titled = bool(fig.layout.title.text) or len(fig.layout.annotations) > 0
            assert titled, f"{name} has no title saying what to look at"
            assert any(a.title.text for a in fig.select_xaxes()), f"{name}: x axis without a label"


@pytest.mark.parametrize("classes", [2, 3, 8])
def test_each_cell_takes_the_colour_of_its_most_likely_class_as_argmax_picks_it(classes):
    rng = np.random.default_rng(classes)
    probs = rng.dirichlet(np.ones(classes), size=(30, 30)).astype(np.float32)
    probs[0, :5] = 1 / classes  # ties: the first class wins, as with argmax
    columns = np.ascontiguousarray(probs.reshape(-1, classes).T)  # the plane's layout: a class a row
    for layout in (probs, columns.T.reshape(30, 30, classes)):
        rgba = boundary_rgba(layout)
        np.testing.assert_array_equal(rgba[..., :3], RGB[probs.argmax(-1)].astype(np.uint8))
        confidence = (probs.max(-1) - 1 / classes) / (1 - 1 / classes)
        expected = (255 * MAX_SHADE * np.clip(confidence, 0, 1) ** 0.7).astype(np.uint8)
        np.testing.assert_array_equal(rgba[..., 3], expected)


def decoded(uri: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGBA"))


@pytest.mark.parametrize("preset", ["spiral", "blobs", "xor"])
@pytest.mark.parametrize("discrete", [False, True])
def test_a_frames_palette_image_is_the_boundary_shading_in_steps(preset, discrete):
    run = current_run(None, PRESETS[preset])
    run.run(30)
    expected = boundary_rgba(run.view.grid_probs(), discrete)[::-1]  # PNG rows top first
    shade = run.view.grid_shade()
    image = decoded(shade_png(shade, run.points.classes, discrete))
    assert image.shape == expected.shape
    assert (image[..., :3] == expected[..., :3]).all(axis=-1).mean() > 0.999  # ties may round apart
    step = 255 * MAX_SHADE / (SHADE_LEVELS - 1)  # one opacity step
    assert np.abs(image[..., 3].astype(int) - expected[..., 3]).max() <= step  # within a step of it
    assert len(shade_png(shade, run.points.classes, discrete)) < len(boundary_image(run.view.grid_probs()))


@pytest.mark.parametrize("discrete", [False, True])
def test_a_regressions_palette_image_is_its_value_shading(discrete):
    values = np.linspace(-1.5, 1.5, 30 * 30, dtype=np.float32)
    image = decoded(shade_png(Shade(30, values=values), 1, discrete))
    assert (image == value_rgba(values.reshape(30, 30, 1), discrete)[::-1]).all()


def test_the_boards_spread_counts_every_score_and_says_it_in_words():
    from mlp.figures.board import score_spread_svg, spread_bins

    low, high, counts = spread_bins([0.5, 0.5, 0.85, 1.0], 0.95, bins=5)
    assert (low, high, counts) == (0.5, 1.0, [2, 0, 0, 1, 1])  # the top score in the last bin
    assert spread_bins([0.9, 0.9], 0.9)[2] == [0, 0, 0, 0, 2, 0, 0, 0]  # one number: a range around it
    svg = score_spread_svg([0.8, 0.96, 0.97], 0.95, "test_acc")
    assert (
        'role="img"' in svg
        and "Best scores of 3 students, from 80.0% to 97.0%; 2 met the goal of 95.0%." in svg
    )
    assert svg.count("<rect") == 2 and ">2</text>" in svg and "goal 95.0%" in svg
    loss = score_spread_svg([0.05, 0.2], 0.1, "test_loss")
    assert "1 met the goal of 0.100" in loss and "test loss" in loss


def test_the_boards_table_shows_every_cell_as_text_and_links_the_setup():
    from mlp.figures.board import ranks_table_parts, score_spread_svg

    def ranks_table_html(*args, **kwargs) -> str:  # the parts as the browser puts them together
        frame, body = ranks_table_parts(*args, **kwargs)
        return frame.replace("<tbody></tbody>", f"<tbody>{''.join(body)}</tbody>")

    rows = [
        {"Rank": 1, "Nickname": "<b>ana</b> **x**", "Score": "99.0%", "Setup": "/playground?a=1&b=<2>"},
        {"Rank": 2, "Nickname": "ben", "Score": "none", "Setup": "/mnist?c=3"},
    ]
    html = ranks_table_html(rows, "Setup", 'Ranks: "moons"')
    assert "&lt;b&gt;ana&lt;/b&gt; **x**" in html and "<b>" not in html  # markup shown as typed
    assert '<a href="/playground?a=1&amp;b=&lt;2&gt;" target="_blank" rel="noopener">Open</a>' in html
    assert '<th scope="col" class="number">Rank</th>' in html and '<td class="number">2</td>' in html
    assert '<th scope="col">Score</th>' in html and 'aria-label="Ranks: &quot;moons&quot;"' in html
    assert ranks_table_html([], "Setup", "none") == ""
    frame, body = ranks_table_parts(rows, "Setup", 'Ranks: "moons"')  # what the board's browser swaps
    assert frame.count("<tbody></tbody>") == 1 and len(body) == 2 and all(r.startswith("<tr>") for r in body)
    hide = ranks_table_html([{"Nickname": '"><b>x', "Hide": '"><b>x'}], None, "t", {"Hide": "Hide"})
    assert '<button type="button" class="board-action" data-value="&quot;&gt;&lt;b&gt;x" ' in hide
    assert 'aria-label="Hide &quot;&gt;&lt;b&gt;x">Hide</button>' in hide and "<b>" not in hide
    keyed = ranks_table_parts(rows, "Setup", "t", key="Nickname")[1][0]
    assert keyed.startswith('<tr data-key="&lt;b&gt;ana&lt;/b&gt; **x**">')  # what a redraw keeps
    for outside in ("//evil.example", "/\\evil.example", "javascript:alert(1)", "/\t/evil.example"):
        cell = ranks_table_html([{"Setup": outside}], "Setup", "t")  # not a link: its text
        assert "<a " not in cell and f"<td>{outside}</td>" in cell, outside
    assert "No scores yet; the goal is 95.0%." in score_spread_svg([], 0.95, "test_acc")


@pytest.mark.parametrize("presenting", [False, True])
def test_the_home_gallery_draws_every_point_of_every_set_in_svg_with_its_name(presenting):
    """An SVG panel a set (no plotly on the page a class opens first): each of its points a dot
    in its class's colour, inside the panel, and its name in the page's text colour."""
    import re

    from mlp.data import gallery
    from mlp.figures.plane import toy_gallery
    from mlp.figures.style import CLASS_COLORS

    sets = gallery()
    html = toy_gallery(sets, presenting=presenting)
    panels = re.findall(r"<svg .*?</svg>", html)
    assert len(panels) == len(sets)
    for panel, (kind, (_, y)) in zip(panels, sets.items(), strict=True):
        assert f'aria-label="{kind}: {len(y)} points in {len(set(y))} classes"' in panel
        assert re.search(rf'<text [^>]*fill="currentColor">{kind}</text>', panel)
        for c in set(y):
            dots = re.search(rf'<path d="([^"]*)" stroke="{CLASS_COLORS[c]}"/>', panel).group(1)
            xy = np.array(re.findall(r"M([\d.]+) ([\d.]+)h0", dots), dtype=float)
            assert len(xy) == (y == c).sum() and xy.min() >= 2 and xy.max() <= 98
    width = int(re.search(r'width="(\d+)"', panels[0]).group(1))
    assert width * 14 / 100 >= (16 if presenting else 11)  # its names' size on screen, in px
