"""MLP Playground: the pages, the page config and the shared sidebar; and the server they run on.

`streamlit run app.py` finds `app` below (an st.App: Streamlit's own server plus the 2D
playground's frame route, pages/serving/frames.py, the route that sets the app's HttpOnly cookies,
pages/ui/cookies.py, and the route by which a replica shows the launcher of deploy/replicas.py
that it is the process answering its port, deploy/identity.py)
and serves it. Every visitor's run of the script then takes the other branch: Streamlit runs
the script as `__main__`.
"""

import streamlit as st

if __name__ == "__main__":
    from pages.ui import presenter_toggle, presenting, training_status, warm_up
    from pages.ui.rooms import room_box

    st.set_page_config(page_title="MLP Playground", page_icon=":material/hub:", layout="wide")

    pages = [
        st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("pages/forward_backward.py", title="Forward & backward", icon=":material/function:"),
        st.Page("pages/playground.py", title="2D playground", icon=":material/scatter_plot:"),
        st.Page("pages/mnist.py", title="MNIST", icon=":material/draw:"),
        st.Page("pages/board.py", title="Class board", icon=":material/leaderboard:"),
    ]
    # A projector's first screen is the page's: its page links go to the top bar, which is there anyway.
    navigation = st.navigation(pages, position="top" if presenting() else "sidebar")
    warm_up()  # once per process: a rerun's garbage collection then walks only what reruns make

    with st.sidebar:
        presenter_toggle()
        if navigation.url_path != "board":  # (the instructor's link names its room too)
            room_box()  # a class room: join it, and challenges' results go to its board
        st.caption("MNIST digits by LeCun, Cortes and Burges, CC BY-SA 3.0.")
        # A run trains on while its visitor looks elsewhere. After the room box: this line redraws
        # on a timer, and what a run draws after such a fragment can vanish (pages/board.py says
        # when). The page's own sidebar widgets still come after it.
        training_status(navigation.url_path)

    navigation.run()
else:
    from deploy.identity import replica_route
    from mlp.device import counts_in_turns, one_blas_thread
    from pages.serving.frames import routes
    from pages.ui import cookies
    from pages.ui.internals import no_delay

    one_blas_thread()  # a server: every visitor's frame on one thread (mlp/device.py says why)
    counts_in_turns()  # a lone job on every core, frames on one, in turns (mlp/device.py)
    no_delay()  # each answer sent at once, not 40 ms later (pages/ui/internals.py, 5)
    app = st.App("app.py", routes=[*routes(), replica_route(), cookies.route()])
