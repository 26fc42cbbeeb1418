"""Text on screen: a person's own text shown as text, never as Markdown; errors and link notes.

The one path for text from outside: a name or value goes through literal(), an error through
say(), a library sentence that may carry an exception's words through plain().
"""

import logging
import re
from collections.abc import Sequence

import streamlit as st

from mlp.errors import InputError, unexpected
from mlp.links.settings import LinkNote

_log = logging.getLogger(__name__)
# What Markdown could make a link, an image, HTML, code, emphasis, math or a table of: a
# backslash before any ASCII punctuation makes it a plain character.
_ACTIVE = re.compile(r"([\\`*_\[\]<>!$~|#&])")
# What Streamlit still links or colours after parsing, in the text itself (escapes gone by then):
# http://, https://, www. and e-mail addresses; :red[...]. An invisible word joiner breaks each.
_LINKED = re.compile(r"(?i)https?(?=:)|www(?=\.)|@|(?=\[)")

# Streamlit's frontend rewrites every ":material/" in Markdown to ":material_" before parsing it,
# code spans included (that is how it draws icon shortcodes). A zero-width space inside keeps a
# person's ":material/..." as they wrote it (Streamlit escapes its own messages the same way).
_ICON_PREFIX, _ICON_PREFIX_SHOWN = ":material/", ":material\u200b/"

MAX_NOTES = 5  # link notes shown one by one; the rest are counted


def literal(text: str, limit: int = 60) -> str:
    """Untrusted text (a link's, a file name) as Markdown that shows it verbatim: a code span.

    Inside a code span Markdown draws no link, image or HTML, and makes no autolink of a bare
    address; the text is cut at `limit` characters and kept to one line.
    """
    text = " ".join(str(text).split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    text = text.replace(_ICON_PREFIX, _ICON_PREFIX_SHOWN)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def plain(text: str) -> str:
    """A sentence as Markdown that draws it as it is, on one line: nothing in it can become a
    link (not even a bare address), an image, HTML, code, emphasis or math."""
    text = _LINKED.sub(lambda found: found[0] + "\u2060", " ".join(str(text).split()))
    text = text.replace(_ICON_PREFIX, _ICON_PREFIX_SHOWN)
    return _ACTIVE.sub(r"\\\1", text)


def say(error: BaseException) -> str:
    """An error as Markdown: its sentence as text, the person's own text in it as literal text.

    An error that isn't a ValueError (the library's way of saying "bad input") is a fault, not
    a sentence: the visitor gets what it means for them, the log its text.
    """
    if isinstance(error, InputError):
        return plain(error.template).format(*(literal(q) for q in error.quoted))
    if isinstance(error, ValueError):
        return plain(str(error))
    _log.error("shown to a visitor as a sentence: %r", error, exc_info=error)
    return plain(unexpected(error))


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
