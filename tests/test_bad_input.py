"""Every place a person or a link puts data in, fed what a lecture hall will feed it.

Each case opens the page as a link would (AppTest, the real shell), puts the input in, and
asserts three things: no exception; a message that says what was wrong (the `expect` pattern,
matched against every warning, error and info on the page); and a page that still works
afterwards (it trains a step, walks a step, or takes a good file). Every text the page shows is
also checked for Markdown or HTML that could draw a link, an image or an element: a person's
own text may only appear inside a code span.
"""

from __future__ import annotations

import io
import json
import pickle
import re
import string
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw
from safetensors.torch import save as save_tensors

from mlp.data.digits import MAX_IMAGE_MB
from mlp.data.points import MAX_CSV_BYTES
from mlp.io import architecture_json, model_to_bytes
from mlp.lessons.mnist import MAX_MODEL_MB
from mlp.model import MLP
from tests.conftest import open_page, wait_for_app

PLAYGROUND, FORWARD, MNIST, HOME = (
    "pages/playground.py",
    "pages/forward_backward.py",
    "pages/mnist.py",
    "pages/home.py",
)
TRAP = "http://127.0.0.1:9/"  # an address nothing listens on: a link or image to it is an injection
LONG = "9" * 10_000
MD_KEY, MD_VALUE = f"[Log in here]({TRAP}login)", f"![]({TRAP}pixel.png)"
SCRIPT = "<script>alert(1)</script>"
HTML = f'<img src="{TRAP}html.png">'


@dataclass(frozen=True)
class Case:
    """One bad input: where it goes and the words its message must contain (a regex)."""

    id: str
    page: str
    expect: str
    query: dict[str, str] = field(default_factory=dict)
    upload: tuple[str, str, bytes] | None = None  # (uploader key, file name, content)


# --- Inputs ----------------------------------------------------------------------------------


def csv(text: str) -> bytes:
    return text.encode()


def points(n: int = 30, label=lambda i: i % 2, x1=lambda i: i) -> bytes:
    rows = "".join(f"{x1(i)},{(i * 7) % 11},{label(i)}\n" for i in range(n))
    return csv("x1,x2,label\n" + rows)


def image(kind: str) -> bytes:
    """A picture of a '1' in various formats, and pictures that aren't digits."""
    digit = Image.new("L", (56, 56), 255)
    ImageDraw.Draw(digit).line([(28, 8), (28, 48)], fill=0, width=6)
    pictures = {
        "gif": (digit.convert("P"), "GIF"),
        "cmyk": (digit.convert("CMYK"), "JPEG"),
        "png16": (Image.fromarray(np.asarray(digit).astype(np.uint16) * 257), "PNG"),
        "png": (digit, "PNG"),
        "1x1": (Image.new("L", (1, 1), 0), "PNG"),
        "blank": (Image.new("L", (64, 64), 255), "PNG"),
        "bomb": (Image.new("1", (10_000, 10_000)), "PNG"),  # 12 KB on disk, 100 megapixels
        "huge bomb": (Image.new("1", (20_000, 20_000)), "PNG"),  # past Pillow's own limit
        "3000x2001": (Image.new("1", (3000, 2001)), "PNG"),  # just past the pixels decoded
    }
    picture, fmt = pictures[kind]
    out = io.BytesIO()
    picture.save(out, fmt)
    return out.getvalue()


def model_file(kind: str) -> bytes:
    model = MLP(784, [16], 10, seed=0)
    tensors = {name: t.detach().clone() for name, t in model.state_dict().items()}
    if kind == "nan":
        tensors["layers.0.weight"][0, 0] = float("nan")
    if kind == "wrong shape":
        tensors["layers.0.weight"] = torch.zeros(16, 783)
    declared = {"bomb": [2048] * 4, "wide": [70000], "deep": [8] * 5}  # the first: the largest allowed
    if kind in declared:  # 200 bytes declaring a network: 784-2048×4-10 is 54 MB of weights
        arch = {"model": {"d_in": 784, "hidden": declared[kind], "d_out": 10}}
        return save_tensors({"x": torch.zeros(1)}, metadata={"architecture": str(arch).replace("'", '"')})
    if kind == "markdown":  # a file whose training record and architecture try to draw a link
        arch = architecture_json(model, training={"optimizer": f"[log in]({TRAP})", "lr": 0.1})
        return save_tensors(tensors, metadata={"architecture": arch})
    # Files whose own words (tensor names, keys, values) reach an error message: each tries Markdown.
    arch = architecture_json(model)
    if kind == "markdown dtype":
        return save_tensors(
            {**tensors, MD_VALUE: torch.zeros(2, dtype=torch.int32)}, metadata={"architecture": arch}
        )
    if kind == "markdown extra":
        return save_tensors({**tensors, MD_KEY: torch.zeros(2)}, metadata={"architecture": arch})
    if kind == "markdown shape":
        return safetensors_file({HTML: {"dtype": "F32", "shape": MD_VALUE, "data_offsets": [0, 0]}}, arch)
    if kind == "markdown key":
        return save_tensors(
            tensors, metadata={"architecture": arch.replace('"d_in"', f'"{MD_KEY}": 1, "d_in"')}
        )
    if kind == "markdown type":
        return save_tensors(
            tensors, metadata={"architecture": arch.replace('"dropout": 0.0', f'"dropout": ["{MD_VALUE}"]')}
        )
    if kind == "markdown damaged":  # tensors past the file's end: safetensors' complaint is not repeated
        entry = {"dtype": "F32", "shape": [16, 784], "data_offsets": [0, 4 * 16 * 784]}
        return safetensors_file(
            {
                "layers.0.weight": entry,
                **{n: e for n, e in _entries(model).items() if n != "layers.0.weight"},
            },
            arch,
        )
    return save_tensors(tensors, metadata={"architecture": arch})


def _entries(model: MLP) -> dict:
    """Header entries for a model's tensors, laid out one after another (no data follows)."""
    entries, offset = {}, 0
    for name, t in model.state_dict().items():
        entries[name] = {
            "dtype": "F32",
            "shape": list(t.shape),
            "data_offsets": [offset, offset + 4 * t.numel()],
        }
        offset += 4 * t.numel()
    return entries


def safetensors_file(entries: dict, architecture: str, data: bytes = b"") -> bytes:
    """A safetensors file with any header: what a hand-made file may declare."""
    header = json.dumps({"__metadata__": {"architecture": architecture}, **entries}).encode()
    return struct.pack("<Q", len(header)) + header + data


LINKS = [
    # The playground: numbers, lists, choices, and text that wants to be Markdown or HTML.
    Case("pg-lr-nan", PLAYGROUND, r"lr=NaN .*lr must be a finite number", {"lr": "NaN"}),
    Case("pg-lr-inf", PLAYGROUND, r"lr=inf .*lr must be a finite number", {"lr": "inf"}),
    Case("pg-lr-1e400", PLAYGROUND, r"lr=1e400 .*finite number", {"lr": "1e400"}),
    Case("pg-lr-negative", PLAYGROUND, r"lr=-1 .*between 0.0001 and 10", {"lr": "-1"}),
    Case("pg-lr-word", PLAYGROUND, r"lr=fast .*must be a number between", {"lr": "fast"}),
    Case("pg-n-negative", PLAYGROUND, r"n=-5 .*between 50 and 2000", {"n": "-5"}),
    Case("pg-n-huge", PLAYGROUND, r"n=1e9 .*between 50 and 2000", {"n": "1e9"}),
    Case("pg-n-fraction", PLAYGROUND, r"n=12.5 .*whole number", {"n": "12.5"}),
    Case(
        "pg-hidden-wide",
        PLAYGROUND,
        r"hidden=99999 .*hidden must be 0 to 8 layers of 1 to 128 units",
        {"hidden": "99999"},
    ),
    Case("pg-hidden-deep", PLAYGROUND, r"0 to 8 layers", {"hidden": "-".join(["4"] * 40)}),
    Case("pg-hidden-huge-list", PLAYGROUND, r"longer than", {"hidden": ",".join(["8"] * 5000)}),
    Case("pg-hidden-word", PLAYGROUND, r"not a whole number|hidden must be", {"hidden": "lots"}),
    Case("pg-data-unknown", PLAYGROUND, r"data=.*must be one of", {"data": "mnist"}),
    Case("pg-data-script", PLAYGROUND, r"must be one of", {"data": SCRIPT}),
    Case("pg-key-markdown", PLAYGROUND, r"no such setting", {MD_KEY: "1"}),
    Case("pg-value-image", PLAYGROUND, r"lr=.*must be a number", {"lr": MD_VALUE}),
    Case("pg-key-html", PLAYGROUND, r"no such setting", {"<b>bold</b>": "<img src=x>"}),
    Case("pg-long-value", PLAYGROUND, r"longer than", {"seed": LONG}),
    Case("pg-speed-zero", PLAYGROUND, r"sps=0 .*between 1 and 2000", {"sps": "0"}),
    Case("pg-speed-past-slider", PLAYGROUND, r"sps=5000 .*between 1 and 2000", {"sps": "5000"}),
    Case("pg-speed-fraction", PLAYGROUND, r"sps=2.5 .*whole number", {"sps": "2.5"}),
    Case("pg-legacy-speed-past-slider", PLAYGROUND, r"sps=5000 .*between 1 and 2000", {"speed": "500"}),
    Case("pg-classes-9", PLAYGROUND, r"classes=9 .*between 2 and 5", {"classes": "9"}),
    Case("pg-batch-negative", PLAYGROUND, r"bs=-1 .*between 0 and 512", {"bs": "-1"}),
    Case("pg-seed-2-40", PLAYGROUND, r"seed=1099511627776 .*between 0 and", {"seed": str(2**40)}),
    Case("pg-engine-unknown", PLAYGROUND, r"engine=gpu .*must be one of", {"engine": "gpu"}),
    Case("pg-features-unknown", PLAYGROUND, r"feat=.*features must be some of", {"feat": "x3sq-" + SCRIPT}),
    Case(
        "pg-lesson-unknown",
        PLAYGROUND,
        r"lesson=no-such-lesson .*no lesson of that name",
        {"lesson": "no-such-lesson"},
    ),
    Case("pg-challenge-script", PLAYGROUND, r"no challenge of that name", {"challenge": SCRIPT}),
    Case("pg-many-unknown", PLAYGROUND, r"more link parameters", {f"k{i}": "1" for i in range(200)}),
    # The forward & backward page: its network, batch and view.
    Case("fb-n-zero", FORWARD, r"n=0 .*between 1 and 1024", {"n": "0"}),
    Case("fb-d_in-huge", FORWARD, r"d_in=1000000 .*between 1 and 1024", {"d_in": "1000000"}),
    Case("fb-k-one", FORWARD, r"k=1 .*between 2 and 100", {"k": "1"}),
    Case("fb-step-unknown", FORWARD, r"step=zz .*", {"step": "zz"}),
    Case("fb-tab-html", FORWARD, r"must be one of", {"tab": "<b>init</b>"}),
    Case("fb-depth-huge", FORWARD, r"depth=1000 .*between 4 and 16", {"depth": "1000"}),
    Case("fb-depth-17", FORWARD, r"depth=17 .*between 4 and 16", {"depth": "17"}),  # MLP's limit
    Case("fb-input-unknown", FORWARD, r"input=file .*must be one of", {"input": "file"}),
    Case("fb-break-maybe", FORWARD, r"break=maybe .*", {"break": "maybe"}),
    Case("fb-toy-markdown", FORWARD, r"must be one of", {"toy": MD_KEY}),
    Case("fb-hidden-nan", FORWARD, r"hidden=nan", {"hidden": "nan"}),
    # The MNIST page: network and training settings.
    Case("mn-epochs-zero", MNIST, r"epochs=0 .*between 1 and 100", {"epochs": "0"}),
    Case("mn-lr-huge", MNIST, r"lr=1e400 .*finite", {"lr": "1e400"}),
    Case("mn-bs-huge", MNIST, r"bs=1000000000 .*between 16 and 1024", {"bs": "1000000000"}),
    Case("mn-amp-yes", MNIST, r"amp=yes .*", {"amp": "yes"}),
    Case("mn-device-tpu", MNIST, r"device=tpu .*must be one of", {"device": "tpu"}),
    Case("mn-hidden-wide", MNIST, r"hidden=100000 .*0 to 4 layers of 1 to 2048 units", {"hidden": "100000"}),
    Case("mn-key-markdown", MNIST, r"no such setting", {MD_KEY: MD_VALUE}),
    # Home: only lesson and challenge links mean something there.
    Case("home-key-markdown", HOME, r"home page has no settings", {MD_KEY: MD_VALUE}),
]

CSVS = [
    Case(
        "csv-wrong-columns",
        PLAYGROUND,
        r"Expected the header x1, x2, label",
        upload=("pg_upload", "a.csv", csv("a,b\n1,2\n")),
    ),
    Case(
        "csv-text",
        PLAYGROUND,
        r"Row 2 .*not a finite number",
        upload=("pg_upload", "t.csv", csv("x1,x2,label\nten,2,0\n" + "1,2,1\n" * 20)),
    ),
    Case(
        "csv-empty", PLAYGROUND, r"not a readable CSV|Expected the header", upload=("pg_upload", "e.csv", b"")
    ),
    Case("csv-header-only", PLAYGROUND, r"0 rows", upload=("pg_upload", "h.csv", csv("x1,x2,label\n"))),
    Case(
        "csv-one-class", PLAYGROUND, r"two classes", upload=("pg_upload", "o.csv", points(label=lambda i: 0))
    ),
    Case(
        "csv-nine-classes",
        PLAYGROUND,
        r"9 different labels; at most 8",
        upload=("pg_upload", "9.csv", points(60, lambda i: i % 9)),
    ),
    Case(
        "csv-nan",
        PLAYGROUND,
        r"not a finite number",
        upload=("pg_upload", "n.csv", points(x1=lambda i: "nan" if i == 5 else i)),
    ),
    Case(
        "csv-inf",
        PLAYGROUND,
        r"not a finite number",
        upload=("pg_upload", "i.csv", points(x1=lambda i: "inf" if i == 5 else i)),
    ),
    Case(
        "csv-million-rows",
        PLAYGROUND,
        r"MB; the limit is 2 MB",
        upload=("pg_upload", "m.csv", csv("x1,x2,label\n" + "1,2,0\n" * 1_000_000)),
    ),
    Case(
        "csv-20-mb",
        PLAYGROUND,
        r"20.0 MB; the limit is 2 MB",
        upload=("pg_upload", "b.csv", b"1" * 20_000_000),
    ),
    Case("csv-binary", PLAYGROUND, r"not a text file", upload=("pg_upload", "x.csv", bytes(range(256)) * 10)),
    Case(
        "csv-utf16",
        PLAYGROUND,
        r"not a text file",
        upload=("pg_upload", "u.csv", "x1,x2,label\n1,2,0\n".encode("utf-16")),
    ),
    Case(
        "csv-semicolons",
        PLAYGROUND,
        r"Expected the header x1, x2, label",
        upload=("pg_upload", "s.csv", csv("x1;x2;label\n1;2;0\n" * 12)),
    ),
    Case(
        "csv-labels-fractional",
        PLAYGROUND,
        r"whole numbers",
        upload=("pg_upload", "f.csv", points(label=lambda i: i % 2 + 0.5)),
    ),
    Case("csv-too-few", PLAYGROUND, r"at least 10 points", upload=("pg_upload", "few.csv", points(5))),
    Case(
        "csv-markdown-cell",
        PLAYGROUND,
        r"not a finite number",
        upload=("pg_upload", "md.csv", points(x1=lambda i: MD_VALUE if i == 3 else i)),
    ),
    Case(
        "csv-markdown-header",
        PLAYGROUND,
        r"Expected the header x1, x2, label \(classes\) or x1, x2, value \(a regression\), in that order; "
        r"found ` x1, !\[\]",
        upload=("pg_upload", "mdh.csv", csv(f"x1,{MD_VALUE},label\n" + "1,2,0\n" * 12)),
    ),
    Case(
        "csv-html-cell",
        PLAYGROUND,
        r"Row 5 .*column label, has ` <img .*not a finite number",
        upload=("pg_upload", f"{HTML}.csv", points(label=lambda i: HTML if i == 3 else i % 2)),
    ),
    Case(
        "csv-markdown-unreadable",
        PLAYGROUND,
        r"not a readable CSV|Expected the header",
        upload=("pg_upload", f"{MD_KEY}.csv", csv(f'x1,x2,label\n1,2,"{MD_VALUE}\n')),
    ),
    Case(
        "csv-markdown-name",
        PLAYGROUND,
        r"two classes",
        upload=("pg_upload", f"{MD_KEY}.csv", points(label=lambda i: 1)),
    ),
]

MODELS = [
    Case(
        "model-random-bytes",
        MNIST,
        r"not a safetensors model file",
        upload=("mn_model_file", "r.safetensors", np.random.default_rng(0).bytes(4096)),
    ),
    Case(
        "model-pickle",
        MNIST,
        r"not a safetensors model file",
        upload=("mn_model_file", "p.pt", pickle.dumps({"w": [1, 2, 3]})),
    ),
    Case("model-empty", MNIST, r"too short", upload=("mn_model_file", "e.safetensors", b"")),
    Case(
        "model-50-mb",
        MNIST,
        r"not a safetensors model file",
        upload=("mn_model_file", "big.safetensors", b"\0" * 50_000_000),
    ),
    Case(
        "model-wrong-shape",
        MNIST,
        r"don't fit the architecture",
        upload=("mn_model_file", "w.safetensors", model_file("wrong shape")),
    ),
    Case(
        "model-nan", MNIST, r"NaN or infinite", upload=("mn_model_file", "n.safetensors", model_file("nan"))
    ),
    Case(
        "model-bomb",
        MNIST,
        r"don't fit the architecture",
        upload=("mn_model_file", "b.safetensors", model_file("bomb")),
    ),
    Case(  # wider than this page allows (and than MLP does): the page's limit, in its words
        "model-wide",
        MNIST,
        r"doesn't fit this page: each width must be between 1 and 2048; got 70000\.",
        upload=("mn_model_file", "wide.safetensors", model_file("wide")),
    ),
    Case(
        "model-deep",
        MNIST,
        r"doesn't fit this page: use 0 to 4 hidden layers; got 5\.",
        upload=("mn_model_file", "deep.safetensors", model_file("deep")),
    ),
    Case(
        "model-2d",
        MNIST,
        r"takes 2 inputs; this page needs 784",
        upload=("mn_model_file", "2d.safetensors", model_to_bytes(MLP(2, [8], 3))),
    ),
    Case("model-markdown-name", MNIST, r"too short", upload=("mn_model_file", f"{MD_KEY}.safetensors", b"")),
    Case(
        "model-markdown-dtype",
        MNIST,
        r"The tensor ` !\[\]\(http.*\) ` is not stored as floating-point numbers",
        upload=("mn_model_file", f"{HTML}.safetensors", model_file("markdown dtype")),
    ),
    Case(
        "model-markdown-shape",
        MNIST,
        r"The tensor ` <img .* ` has no readable shape",
        upload=("mn_model_file", "s.safetensors", model_file("markdown shape")),
    ),
    Case(
        "model-markdown-extra",
        MNIST,
        r"an extra tensor, ` \[Log in here\]",
        upload=("mn_model_file", "x.safetensors", model_file("markdown extra")),
    ),
    Case(
        "model-markdown-key",
        MNIST,
        r"a setting this app doesn't know: ` \[Log in here\]",
        upload=("mn_model_file", "k.safetensors", model_file("markdown key")),
    ),
    Case(
        "model-markdown-type",
        MNIST,
        r"a setting's type is wrong",
        upload=("mn_model_file", "t.safetensors", model_file("markdown type")),
    ),
    Case(
        "model-markdown-damaged",
        MNIST,
        r"could not be read: the file is damaged or cut short",
        upload=("mn_model_file", f"{MD_VALUE}.safetensors", model_file("markdown damaged")),
    ),
    Case(  # a good model whose file name and training record are Markdown: loaded, shown as text
        "model-markdown-record",
        MNIST,
        r"Loaded from ` \[Log in here\].*trained with lr 0.1\.",
        upload=("mn_model_file", f"{MD_KEY}.safetensors", model_file("markdown")),
    ),
]

IMAGES = [
    Case(
        "image-not-an-image",
        MNIST,
        r"not an image this app can read",
        upload=("mn_image", "notes.txt", b"not a picture"),
    ),
    Case(
        "image-bomb",
        MNIST,
        r"10000×10000 pixels: far too large",
        upload=("mn_image", "bomb.png", image("bomb")),
    ),
    Case(
        "image-huge-bomb",
        MNIST,
        r"over 179 million pixels",
        upload=("mn_image", "bomb2.png", image("huge bomb")),
    ),
    Case(
        "image-markdown",
        MNIST,
        r"not an image this app can read",
        upload=("mn_image", f"{MD_KEY}{HTML}.png", MD_VALUE.encode() + HTML.encode()),
    ),
    Case(
        "image-too-large-markdown-name",
        MNIST,
        r"3000×2001 pixels: far too large",
        upload=("mn_image", f"{MD_VALUE}.png", image("3000x2001")),
    ),
    Case("image-1x1", MNIST, r"No digit found", upload=("mn_image", "dot.png", image("1x1"))),
    Case("image-blank", MNIST, r"No digit found", upload=("mn_image", "blank.png", image("blank"))),
    Case(
        "image-truncated",
        MNIST,
        r"not an image this app can read",
        upload=("mn_image", "cut.png", image("png")[:60]),
    ),
]
GOOD_IMAGES = ["gif", "cmyk", "png16"]  # formats a phone or an editor makes: each must be read

CASES = LINKS + CSVS + MODELS + IMAGES


# --- Checks ----------------------------------------------------------------------------------


def shown(app) -> list[str]:
    """Every message and text the page shows, sidebar included."""
    kinds = (app.warning, app.error, app.info, app.success, app.caption, app.markdown, app.toast)
    return [str(e.value) for kind in kinds for e in kind]


def outside_code(text: str) -> str:
    """The text without its code spans (any fence length) and backslash-escaped characters, read
    left to right as Markdown does: what Markdown could still draw something of."""
    kept, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in string.punctuation:
            i += 2
        elif fence := re.match(r"`+", text[i:]):
            close = re.compile(rf"(?<!`){fence[0]}(?!`)").search(text, i + len(fence[0]))
            i = close.end() if close else i + len(fence[0])
            if not close:
                kept.append(fence[0])
        else:
            kept.append(text[i])
            i += 1
    return "".join(kept)


def assert_no_injection(app) -> None:
    """A person's text may only appear inside a code span or escaped: no link, image or HTML of theirs."""
    for text in shown(app):
        if text.startswith("<svg"):  # the app's own drawings (no user text reaches them)
            continue
        rendered = outside_code(text)
        assert TRAP not in rendered, text
        assert "<script" not in rendered and "<img" not in rendered and "<b>" not in rendered, text


def open_tab(app, name: str) -> None:
    """Open one of the MNIST page's lazy tabs (only the open tab's content runs)."""
    app.session_state["mn_tab"] = name
    app.run()


def load_model(app) -> None:
    """Put a (small, untrained) model on the MNIST page, so its Try-it tab takes images."""
    open_tab(app, "Keep it")
    app.file_uploader(key="mn_model_file").upload("good.safetensors", model_file("good")).run()
    assert app.session_state["mn_session"].ready
    open_tab(app, "Try it")


def still_works(app, page: str) -> None:
    """The page does its job after the bad input."""
    if page == PLAYGROUND:
        before = app.session_state["pg_run"].trainer.step_count
        app.button(key="pg_step").click().run()
        assert app.session_state["pg_run"].trainer.step_count == before + 1
    elif page == FORWARD:
        before = app.session_state["fb_jump"]
        app.button(key="fb_next").click().run()
        assert app.session_state["fb_jump"] != before
    elif page == MNIST:
        open_tab(app, "Keep it")
        app.file_uploader(key="mn_model_file").upload("good.safetensors", model_file("good")).run()
        assert app.session_state["mn_session"].ready
    assert not app.exception, app.exception


# The quick loop feeds the first input of each kind (each is a page run, ~0.35 s); CI feeds all.
FIRSTS = {kind[0].id for kind in (LINKS, CSVS, MODELS, IMAGES)}
TABLE = [pytest.param(c, id=c.id, marks=() if c.id in FIRSTS else pytest.mark.slow) for c in CASES]


@pytest.mark.parametrize("case", TABLE)
def test_bad_input_gets_a_clear_message_and_the_page_still_works(case: Case):
    app = open_page(case.page, case.query)
    if case.upload is not None:
        key, name, content = case.upload
        if key == "mn_image":
            load_model(app)
        elif key == "mn_model_file":
            open_tab(app, "Keep it")
        app.file_uploader(key=key).upload(name, content).run()
    assert not app.exception, app.exception
    messages = [str(e.value) for kind in (app.warning, app.error, app.info) for e in kind]
    assert any(re.search(case.expect, m) for m in messages), messages
    assert_no_injection(app)
    still_works(app, case.page)


@pytest.mark.slow
@pytest.mark.parametrize("kind", GOOD_IMAGES)
def test_the_image_formats_people_upload_are_read(kind: str):
    app = open_page(MNIST)
    load_model(app)
    app.file_uploader(key="mn_image").upload(f"digit.{kind}", image(kind)).run()
    assert not app.exception and not app.error, [e.value for e in app.error]


def test_there_are_at_least_sixty_cases_of_every_kind():
    counts = {
        "link": len(LINKS),
        "csv": len(CSVS),
        "model": len(MODELS),
        "image": len(IMAGES) + len(GOOD_IMAGES),
    }
    assert sum(counts.values()) >= 60 and min(counts.values()) >= 6, counts


# --- In the browser: what Streamlit draws of it ------------------------------------------------

# Bytes each uploader takes in the browser (its MB are 10^6): a larger file never reaches a page.
UPLOAD_LIMITS = {
    "pg_upload": MAX_CSV_BYTES,
    "mn_image": MAX_IMAGE_MB * 10**6,
    "mn_model_file": MAX_MODEL_MB * 10**6,
}
# Elements a message might be made to draw (the page's own links and images are elsewhere).
MESSAGES = ("[data-testid=stAlert]", "[data-testid=stCaptionContainer]")
DRAWN = ", ".join(f"{box} {tag}" for box in MESSAGES for tag in ("a", "img", "script", "iframe", "b"))
TRAPPED = f"a[href^='{TRAP}'], img[src^='{TRAP}'], [src^='{TRAP}']"


def drawn_text(case: Case) -> re.Pattern:
    """The case's message as the browser shows it: code spans drawn without their fences."""
    return re.compile(case.expect.replace(" `", "").replace("` ", ""))


# Larger files go to the browser from the disk, as a visitor's do: handed over as a buffer, the
# 50 MB model took 38 s of Playwright's encoding before the upload began.
ON_DISK_BYTES = 10**6
# What a file's name on the disk carries instead (no "/" in a file's name, so no TRAP): a link
# and a tag all the same, that DRAWN would find drawn.
DISK_NAME = "[Log in here](login.html)<b>"


def upload_in_browser(tab, case: Case, previous: Case | None, folder: Path) -> None:
    """Put the case's file (its name carrying Markdown and HTML too) in its uploader, once the
    previous file is gone and its message with it, and wait for the case's message."""
    from playwright.sync_api import expect

    alerts = tab.get_by_test_id("stAlert")
    if previous is not None:
        tab.get_by_test_id("stFileChipDeleteBtn").click()
        expect(alerts.filter(has_text=drawn_text(previous))).to_have_count(0)
    _, name, content = case.upload
    if len(content) > ON_DISK_BYTES:
        file = folder / f"{DISK_NAME}{name}"
        file.write_bytes(content)
    else:
        file = {"name": f"{MD_KEY}{HTML}{name}", "mimeType": "application/octet-stream", "buffer": content}
    tab.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(file)
    alerts.filter(has_text=drawn_text(case)).or_(tab.locator(DRAWN)).first.wait_for(state="attached")


@pytest.mark.browser
@pytest.mark.parametrize("cases", [MODELS, CSVS, IMAGES], ids=["models", "csvs", "images"])
def test_no_link_or_image_of_an_uploads_text_is_drawn_in_chromium(page, app_url, cases, tmp_path):
    """Every error path of model, CSV and image loading, fed Markdown and HTML in the file's name
    and (where the path repeats it) its content: Chromium draws no link, image or HTML of it,
    and never asks for the address it names."""
    asked = []
    page.on("request", lambda request: asked.append(request.url) if request.url.startswith(TRAP) else None)
    cases = [c for c in cases if len(c.upload[2]) <= UPLOAD_LIMITS[c.upload[0]]]
    page.goto(f"{app_url}/{'playground' if cases[0].page == PLAYGROUND else 'mnist'}")
    wait_for_app(page)
    if cases[0].upload[0] == "mn_image":  # a model to show the digits to, first
        page.get_by_role("tab", name="Keep it").click()
        good = {
            "name": "good.safetensors",
            "mimeType": "application/octet-stream",
            "buffer": model_file("good"),
        }
        page.get_by_test_id("stFileUploader").locator("input[type=file]").set_input_files(good)
        page.get_by_text("Loaded from").wait_for()
        page.get_by_role("tab", name="Try it").click()
    elif cases[0].upload[0] == "mn_model_file":
        page.get_by_role("tab", name="Keep it").click()
    page.get_by_test_id("stFileUploader").wait_for()
    previous = None
    for case in cases:
        upload_in_browser(page, case, previous, tmp_path)
        assert page.locator(DRAWN).count() == 0, (
            case.id,
            page.locator(DRAWN).first.evaluate("e => e.outerHTML"),
        )
        assert page.locator(TRAPPED).count() == 0, case.id
        previous = case
    assert asked == []
    assert page.locator('[data-testid="stException"]').count() == 0
