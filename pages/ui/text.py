"""Text on screen: a person's own text shown as text, never as Markdown; errors and link notes."""

import re
from collections.abc import Sequence

import streamlit as st

from mlp.errors import InputError
from mlp.lessons.settings import LinkNote

MAX_NOTES = 5  # link notes shown one by one; the rest are counted


def literal(text: str, limit: int = 60) -> str:
    """Untrusted text (a link's, a file name) as Markdown that shows it verbatim: a code span.

    Inside a code span Markdown draws no link, image or HTML, and makes no autolink of a bare
    address; the text is cut at `limit` characters and kept to one line.
    """
    text = " ".join(str(text).split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def say(error: BaseException) -> str:
    """An error's sentence as Markdown, with the person's own text in it shown as literal text."""
    if isinstance(error, InputError):
        return error.template.format(*(literal(q) for q in error.quoted))
    return str(error)


def show_link_notes(notes: Sequence[LinkNote]) -> None:
    """What a link carried that the page could not use, each value shown as plain text."""
    for note in notes[:MAX_NOTES]:
        st.warning(
            f"Ignored {literal(note.key + '=' + note.value)}: {note.reason}.", icon=":material/link_off:"
        )
    if len(notes) > MAX_NOTES:
        st.warning(
            f"…and {len(notes) - MAX_NOTES} more link parameters, ignored.", icon=":material/link_off:"
        )
