"""What every page shares. Streamlit never lists __init__.py as a page."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def require_shell() -> None:
    """Run this page inside app.py's navigation, even when it is the first URL a server sees.

    A folder named pages/ makes Streamlit start in its old directory mode: until some run
    calls st.navigation, a direct link to a page runs that file alone, without app.py's page
    config and sidebar. Leaving that mode and rerunning sends the request through app.py,
    on the same page and with the same query string.
    """
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
