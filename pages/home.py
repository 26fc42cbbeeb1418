"""Home: what the playground is, for whom, and what each page teaches."""

import streamlit as st

import pages.ui as ui
from mlp.curriculum.catalogue import LESSON, LESSONS
from mlp.curriculum.challenges import CHALLENGE, CHALLENGES
from mlp.curriculum.tour import TOURS
from mlp.data import gallery
from mlp.figures.plane import toy_gallery
from mlp.links.settings import LinkNote
from pages.ui.internals import WRAPPING_LINKS_CSS
from pages.ui.rooms import ROOM
from pages.ui.shell import DEBUG, LOAD, PRESENT

ui.require_shell()
ui.show_link_notes(  # a link to Home carries nothing but the page-wide switches
    [
        LinkNote(key, value, "the home page has no settings; each lesson below opens its own page")
        for key, value in st.query_params.to_dict().items()
        if key not in (DEBUG, PRESENT, ROOM)
    ]
)

st.title("MLP Playground")
st.markdown(
    "**See how a neural network computes and learns.** A multilayer perceptron is a few matrix "
    "multiplications with a bend in between; this playground shows every one of them — the "
    "shapes, the values, the gradients — and then trains the same code live, on toy data and on "
    "real handwritten digits."
)
with st.container(key="home_picture"):  # a picture in the first screen, even on a projector
    st.caption("The toy data sets a network learns to separate in the 2D playground")
    st.markdown(toy_gallery(gallery(), presenting=ui.presenter()), unsafe_allow_html=True)
st.html(WRAPPING_LINKS_CSS)  # a lesson's or a challenge's whole title, on as many lines as it takes
for tour in TOURS.values():  # a class in one link: → and ← move it along, the link keeps its place
    st.container(key=f"home_tour_links_{tour.key}").page_link(
        f"pages/{tour.stops[0].page}.py",
        icon=":material/tour:",
        query_params=tour.link(1) | {LOAD: "1"} | ui.switches_query(),  # projector mode goes along
        label=f"**Guided tour: {tour.title}** — {len(tour.stops)} stops, {tour.minutes} minutes; "
        "→ and ← move through it",
    )

left, right = st.columns([3, 2], gap="large")
with left:
    st.subheader("What each page teaches")
    lessons = [
        (
            "pages/forward_backward.py",
            "Forward & backward, step by step",
            ":material/function:",
            "`Z1 = X W1 + b1`, ReLU, softmax, cross-entropy, and backprop down to `dW1`: each operation "
            "with its equation, the code that runs it, its shapes and its values, checked against "
            "PyTorch autograd and finite differences.",
        ),
        (
            "pages/playground.py",
            "2D playground",
            ":material/scatter_plot:",
            "Train a network live on blobs, moons, circles, XOR, a spiral or your own points and watch "
            "the decision boundary form, or fit real values (a regression); compare optimizers, "
            "depths, initialisations, and manual backprop against autograd.",
        ),
        (
            "pages/mnist.py",
            "MNIST",
            ":material/draw:",
            "Train a 784-128-10 network on real handwritten digits (on the GPU when there is one), "
            "watch the curves, open the confusion matrix and the first-layer weights, draw a digit.",
        ),
    ]
    for page, label, icon, text in lessons:
        st.page_link(page, label=f"**{label}**", icon=icon, query_params=ui.switches_query())
        st.markdown(text)
with right:
    st.subheader("Who it is for")
    st.markdown(
        """
- **Students** who know `X @ W` and want to see backprop happen, not just read it.
- **Instructors** presenting live: everything runs offline (a sample of MNIST ships with the
  app), *Projector mode* in the sidebar enlarges the text and slows training to a class's pace,
  and the guided tour walks a class through the course with → and ←.
- **Anyone** curious what the numbers inside a network look like.
"""
    )

ICONS = {
    "forward_backward": ":material/function:",
    "playground": ":material/scatter_plot:",
    "mnist": ":material/draw:",
}
lessons_col, challenges_col = st.columns([3, 2], gap="large")
with lessons_col.container(key="home_lessons_links"):
    st.subheader("Lessons")
    st.caption("Each one fills its page with a setup that shows one idea, and says what to watch for.")
    for lesson in LESSONS.values():
        st.page_link(
            f"pages/{lesson.page}.py",
            label=f"**{lesson.title}**",
            icon=ICONS[lesson.page],
            query_params={LESSON: lesson.key} | ui.switches_query(),
        )
        st.caption(lesson.outcome[0].upper() + lesson.outcome[1:] + ".")
with challenges_col.container(key="home_challenges_links"):
    st.subheader("Challenges")
    st.caption("A goal with numbers; the page checks it as you train and shows the settings that met it.")
    for challenge in CHALLENGES.values():
        st.page_link(
            f"pages/{challenge.page}.py",
            label=challenge.goal,
            icon=":material/flag:",
            query_params={CHALLENGE: challenge.key} | ui.switches_query(),
        )

st.caption(
    "Every page runs on one small library, `mlp` — the same code trains the toy sets and MNIST, "
    "and the step-by-step page shows the math that trains them."
)
