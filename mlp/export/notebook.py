"""A notebook as a list of cells, written as Jupyter's .ipynb or as a plain Python script.

The script is the notebook's code cells in order, its Markdown cells as comments between them,
each cell opened by `# %%` (the cell marker VS Code, PyCharm and jupytext read), so
`python run.py` runs exactly what the notebook runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from string import Template
from urllib.parse import quote

NBFORMAT = (4, 5)  # the .ipynb version written: cells carry ids from 4.5 on


@dataclass
class Notebook:
    """A notebook's cells in order, Markdown or code; `ipynb()` and `script()` write it."""

    cells: list[tuple[str, str]] = field(default_factory=list)  # (kind, source): "markdown" or "code"

    def md(self, text: str) -> Notebook:
        self.cells.append(("markdown", text.strip("\n")))
        return self

    def code(self, text: str) -> Notebook:
        self.cells.append(("code", text.strip("\n")))
        return self

    def ipynb(self) -> str:
        """The notebook as .ipynb JSON (nbformat 4.5), outputs empty: it runs where it is opened."""
        cells = []
        for i, (kind, source) in enumerate(self.cells):
            cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": {}, "source": source.splitlines(True)}
            if kind == "code":
                cell |= {"execution_count": None, "outputs": []}
            cells.append(cell)
        notebook = {
            "cells": cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": NBFORMAT[0],
            "nbformat_minor": NBFORMAT[1],
        }
        return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"

    def script(self) -> str:
        """The notebook as a Python script: `# %%` cells, the Markdown ones as comments."""
        text = ""
        for kind, source in self.cells:
            if kind == "markdown":
                lines = ["# %% [markdown]", *(f"# {line}".rstrip() for line in source.splitlines())]
            else:
                lines = ["# %%", source]
            # Two blank lines between cells, as ruff puts around a function; one after the imports
            imports = text.rstrip().rsplit("\n", 1)[-1].startswith(("import ", "from "))
            text += ("\n\n" if imports else "\n\n\n" if text else "") + "\n".join(lines)
        return text + "\n"


MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")  # markup, maths ($), autolinks (:, .)


def md_text(text: str) -> str:
    """Text from outside (a file's name) as Markdown that shows it literally: its punctuation
    escaped, <, > and & as entities, on one line, so nothing in it becomes markup, maths or a link."""
    escaped = MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_link(url: str) -> str:
    """The page's address as a Markdown link to itself: an http(s) URL in <…>, every character
    that could end it or start markup percent-encoded; anything else, as text (md_text)."""
    if not re.match(r"https?://", url):
        return md_text(url)
    return "<" + quote(url, safe="/:?&=%#,.-_~+@!$'()*;") + ">"


def fill(template: str, **values: object) -> str:
    """`template` with each $name replaced by str(values[name]): code templates keep their braces."""
    return Template(template).substitute({k: str(v) for k, v in values.items()})


def settings_dict(name: str, values: dict[str, object], comments: dict[str, str] | None = None) -> str:
    """`NAME = {...}`, one setting a line, as ruff formats it, each with its comment if any."""
    comments = comments or {}
    lines = [f"{name} = {{"]
    for key, value in values.items():
        note = f"  # {comments[key]}" if key in comments else ""
        lines.append(f"    {literal(key)}: {literal(value)},{note}")
    return "\n".join([*lines, "}"])


def literal(value: object) -> str:
    """A value as Python source, as ruff formats it: strings in double quotes, tuples as lists."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    return repr(value)
