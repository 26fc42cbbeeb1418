"""MLP Playground: registers the pages, sets the page config and the shared sidebar."""

import streamlit as st

from pages.ui import presenter_toggle, training_status, warm_up

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
    presenter_toggle()
    training_status(navigation.url_path)  # a run trains on while its visitor looks elsewhere
    st.caption("MNIST digits by LeCun, Cortes and Burges, CC BY-SA 3.0.")

navigation.run()
