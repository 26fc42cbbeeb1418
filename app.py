"""MLP Playground: registers the pages, sets the page config and the shared sidebar."""

import streamlit as st

from pages.ui import training_status, warm_up

# Scales the whole app for the back row of a lecture hall; Streamlit sizes text in rem.
PROJECTOR_CSS = """<style>
html { font-size: 20px; }
[data-testid="stMetricValue"] { font-size: 1.6rem; }
button[data-testid^="stBaseButton"] { padding-left: 0.5rem; padding-right: 0.5rem; }
</style>"""

st.set_page_config(page_title="MLP Playground", page_icon=":material/hub:", layout="wide")

pages = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/forward_backward.py", title="Forward & backward", icon=":material/function:"),
    st.Page("pages/playground.py", title="2D playground", icon=":material/scatter_plot:"),
    st.Page("pages/mnist.py", title="MNIST", icon=":material/draw:"),
]
navigation = st.navigation(pages)
warm_up()  # once per process: a rerun's garbage collection then walks only what reruns make

with st.sidebar:
    projector = st.toggle(
        "Projector mode",
        key="app_projector",
        help="Larger text everywhere, for presenting to a room.",
    )
    training_status(
        navigation.url_path
    )  # a run keeps training on the server while its visitor looks elsewhere
    st.caption("MNIST digits by LeCun, Cortes and Burges, CC BY-SA 3.0.")
if projector:
    st.html(PROJECTOR_CSS)

navigation.run()
