"""The app's front-end: each custom component's HTML, CSS and JavaScript in files of their own.

    components/<name>/<name>.html   its markup (if any)
    components/<name>/<name>.css    its style (if any)
    components/<name>/<part>.js     its parts: functions a reader can name, the pure ones exported
                                    so that Node's tests import them (tests/js/)
    components/<name>/<name>.js     its entry: `export default function (component) {...}`
    components/styles/<name>.css    page-wide styles (pages/ui/internals.py, pages/board.py)

Streamlit's components v2 takes a component's script as one module, from a string (files by path
only for an installed package's declared asset folder): `component` reads the files once per
process and joins the parts and the entry into that module, so no part imports another. Biome
lints and formats these files, and Node runs their tests (.ci/run).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

HERE = Path(__file__).parent


def text(relative: str) -> str:
    """A front-end file's text (a path inside this folder)."""
    return (HERE / relative).read_text(encoding="utf-8")


def script(name: str, parts: Sequence[str] = ()) -> str:
    """A component's module: its parts, in order, then its entry."""
    return "\n".join(text(f"{name}/{part}.js") for part in (*parts, name))


def style(name: str) -> str:
    """A page-wide style, as the HTML that applies it."""
    return f"<style>{text(f'styles/{name}.css')}</style>"


@functools.cache
def component(name: str, parts: tuple[str, ...] = (), isolate_styles: bool = True):
    """The component `name` (registered once per process as `mlp_<name>`), from its files."""
    folder = HERE / name
    html = text(f"{name}/{name}.html") if (folder / f"{name}.html").exists() else ""
    css = text(f"{name}/{name}.css") if (folder / f"{name}.css").exists() else None
    return st.components.v2.component(
        f"mlp_{name}", html=html, css=css, js=script(name, parts), isolate_styles=isolate_styles
    )
