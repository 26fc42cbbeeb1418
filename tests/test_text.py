"""pages/ui/text.py: the one path for text from outside, as Markdown that draws nothing of it."""

import re

import pytest

from mlp.errors import OUT_OF_MEMORY, UNEXPECTED, InputError
from pages.ui.text import literal, plain, say
from tests.test_bad_input import outside_code

TRAP = "http://127.0.0.1:9/"
ATTEMPTS = [
    f"![x]({TRAP}x.png)",
    f"[log in]({TRAP}login)",
    f"<{TRAP}autolink>",
    f"{TRAP}bare",
    "www.example.com",
    "someone@example.com",
    '<img src="x" onerror="alert(1)">',
    "<script>alert(1)</script>",
    "$\\href{x}{y}$",
    ":red[loud] **bold** _it_ ~strike~ `code` | a | b |",
    "# heading\n- item\n> quote",
    "[ref]\n\n[ref]: http://127.0.0.1:9/ref",
]


# What Streamlit links or colours in a text once Markdown has parsed it (escapes resolved by then).
AFTER_PARSING = re.compile(r"(?i)https?://|www\.|[-.\w+]+@[-\w]+\.|:\w[\w-]*\[")


@pytest.mark.parametrize("text", ATTEMPTS)
def test_plain_leaves_markdown_nothing_to_draw(text):
    markdown = plain(f"The file says {text}, and then some.")
    assert "\n" not in markdown
    assert not re.search(r"[\[\]<>!`*_$~|#&]", outside_code(markdown)), markdown  # each one escaped
    parsed = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)
    assert not AFTER_PARSING.search(parsed), parsed
    assert parsed.replace("\u2060", "") == " ".join(f"The file says {text}, and then some.".split())


@pytest.mark.parametrize("text", ATTEMPTS)
def test_an_input_errors_quoted_text_is_a_code_span_and_its_sentence_is_plain(text):
    shown = say(InputError("The tensor {} is not stored as floating-point numbers [sic].", text))
    assert shown.startswith("The tensor `")
    assert not re.search(r"[\[\]<>!`]|://", outside_code(shown)), shown
    assert literal(text) in shown


def test_a_value_errors_sentence_is_shown_as_it_is_and_draws_nothing():
    sentence = "The file is 20.0 MB; the limit is 2 MB."
    assert say(ValueError(sentence)) == sentence
    shown = say(ValueError(f"Dropout must be in [0, 1); got ![x]({TRAP}x.png)."))
    assert TRAP not in outside_code(shown) and "![" not in outside_code(shown)


def test_a_fault_is_told_as_what_it_means_never_its_text(caplog):
    assert say(RuntimeError(f"tensor '[x]({TRAP})' at /home/teacher/secret")) == UNEXPECTED
    assert say(TypeError("unexpected keyword argument")) == UNEXPECTED
    assert say(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")) == plain(OUT_OF_MEMORY)
    assert "/home/teacher/secret" in caplog.text  # the server's log keeps it
