"""Errors a person caused (a file, a link, a typed value), told in a sentence they can act on."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input. `quoted` holds the person's own text that the sentence repeats.

    str(error) quotes it plainly; a page shows those parts as literal text (never as Markdown
    or HTML), since a file name or a link can say anything.
    """

    def __init__(self, template: str, *quoted: object) -> None:
        self.template = template  # "{}" marks each quoted part
        self.quoted = tuple(str(q) for q in quoted)
        super().__init__(template.format(*(f"'{q}'" for q in self.quoted)))
