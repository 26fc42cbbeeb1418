"""Errors a person caused (a file, a link, a typed value), told in a sentence they can act on.

The rule for what reaches the screen: a ValueError's message is a sentence of the library's own
words and numbers; a person's text (a file or tensor name, a key, a value, a parser's complaint
about their file) travels only as an InputError's quoted parts; any other error is told as a
sentence that says what it means for them, its text kept for the server's log.
"""

from __future__ import annotations

OUT_OF_MEMORY = (
    "The device ran out of memory. Try a smaller batch size or a narrower network, or train on the CPU."
)
UNEXPECTED = "Something went wrong on the server (its log has the details)."


class InputError(ValueError):
    """Bad input. `quoted` holds the person's own text that the sentence repeats.

    str(error) quotes it plainly; a page shows those parts as literal text (never as Markdown
    or HTML), since a file name or a link can say anything.
    """

    def __init__(self, template: str, *quoted: object) -> None:
        self.template = template  # "{}" marks each quoted part
        self.quoted = tuple(str(q) for q in quoted)
        super().__init__(template.format(*(f"'{q}'" for q in self.quoted)))


def unexpected(error: BaseException) -> str:
    """What a visitor is told of an error that isn't their input's: never its text, which may
    carry anything (a path, a tensor's name)."""
    return OUT_OF_MEMORY if "out of memory" in str(error).lower() else UNEXPECTED
