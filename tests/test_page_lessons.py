"""Lessons, challenges and links on the pages (AppTest): one click fills a page, a link reproduces it."""

from urllib.parse import parse_qsl

import pytest

from mlp.curriculum.catalogue import LESSONS
from mlp.curriculum.challenges import CHALLENGES
from mlp.lessons import forward_backward as fb
from mlp.lessons import mnist as mn
from mlp.lessons import playground as pg
from tests.conftest import open_page


def written(at) -> dict[str, str]:
    """The page's own link, as the address bar shows it."""
    return {k: v[-1] if isinstance(v, list) else v for k, v in at.query_params.items()}


def markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_a_lesson_link_alone_fills_the_playground_and_says_what_to_watch():
    lesson = LESSONS["xor-line"]
    at = open_page("pages/playground.py", {"lesson": "xor-line"})
    assert at.session_state["pg_settings"] == pg.from_query(lesson.setup.query)[0]
    assert lesson.watch in markdown(at) and lesson.why in markdown(at)
    assert written(at)["lesson"] == "xor-line"  # and the page's own link keeps it
    at.button(key="pg_lesson_then").click().run()  # "Add a hidden layer of 8 units"
    assert at.session_state["pg_settings"].hidden == (8,)
    assert at.text_input(key="pg_hidden").value == "8"
    at.button(key="pg_lesson_start").click().run()
    assert at.session_state["pg_settings"].hidden == ()


def test_choosing_a_lesson_in_the_sidebar_loads_it_over_changed_settings():
    at = open_page("pages/playground.py")
    at.number_input(key="pg_seed").set_value(7).run()
    at.selectbox(key="pg_lesson").set_value("dead-relu").run()
    settings = at.session_state["pg_settings"]
    assert (settings.lr, settings.optimizer, settings.activation, settings.seed) == (10.0, "sgd", "relu", 1)
    assert not at.exception


def test_a_challenge_loads_its_start_and_is_checked_as_the_run_goes():
    challenge = CHALLENGES["circles-4"]
    at = open_page("pages/playground.py")
    at.selectbox(key="pg_challenge").set_value("circles-4").run()
    assert at.session_state["pg_settings"] == pg.from_query(challenge.start.query)[0]
    captions = "\n".join(c.value for c in at.caption)
    assert "These settings don't count: use at most 4 hidden units in all (now 8)." in captions
    at.text_input(key="pg_hidden").input("4").run()
    at.button(key="pg_epoch").click().run()
    captions = "\n".join(c.value for c in at.caption)
    assert "Not yet: best test accuracy" in captions and challenge.hint in captions


def test_the_forward_page_opens_where_its_link_points_and_writes_it_back():
    settings = fb.ForwardSettings(hidden=(6, 4), seed=3, activation="tanh")
    view = fb.ForwardView(tab="gradients", step="dW2", spread_depth=14, spread_width=128)
    at = open_page("pages/forward_backward.py", fb.to_query(settings, view))
    assert at.session_state["fb_settings"] == settings
    assert at.session_state["fb_tab"] == "Gradient check" and at.session_state["fb_step"] == "dW2"
    assert (at.session_state["fb_init_depth"], at.session_state["fb_init_width"]) == (14, 128)
    link = written(at)
    assert fb.from_query(link)[0] == settings and fb.view_from_query(link, settings)[0] == view
    assert not at.warning  # nothing to complain about


def test_a_forward_link_with_a_step_its_network_lacks_says_so():
    at = open_page("pages/forward_backward.py", {"hidden": "5", "step": "dz4", "tab": "nope"})
    text = "\n".join(w.value for w in at.warning) + "\n".join(m.value for m in at.markdown)
    assert "this network has no such step" in text and "tab must be one of" in text
    assert at.session_state["fb_step"] == "z1"


def test_the_init_lesson_opens_the_initialisation_tab():
    at = open_page("pages/forward_backward.py", {"lesson": "init"})
    assert at.session_state["fb_settings"].init == "normal"
    assert at.session_state["fb_tab"] == "Initialisation" and at.session_state["fb_init_depth"] == 10


def test_the_mnist_page_writes_its_settings_into_its_link():
    settings = mn.MnistSettings(hidden=(64, 32), epochs=3, lr=3e-3, device="cpu")
    at = open_page("pages/mnist.py", mn.to_query(settings))
    assert mn.from_query(written(at)) == (settings, [])
    at.selectbox(key="mn_challenge").set_value("mnist-10k").run()
    captions = "\n".join(c.value for c in at.caption)
    assert "use at most 10,000 parameters (now 101,770)" in captions


@pytest.mark.slow
def test_every_page_offers_its_link_to_copy():
    for page, prefix in (
        ("pages/playground.py", "pg_"),
        ("pages/forward_backward.py", "fb_"),
        ("pages/mnist.py", "mn_"),
    ):
        at = open_page(page)
        assert not [c for c in at.code if "?" in c.value]  # drawn only once opened: a visitor's click
        at.session_state["share_link"] = True  # "Link to this setup", opened
        at.run()
        link = next(c.value for c in at.code if "?" in c.value)
        query = dict(parse_qsl(link.split("?", 1)[1]))
        assert query == written(at), prefix


def test_home_lists_every_lesson_and_challenge():
    at = open_page("pages/home.py")
    text = "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)
    assert not at.exception
    for lesson in LESSONS.values():
        assert lesson.outcome[1:] in text


def initial_weights(at) -> list:
    return [v.clone() for v in at.session_state["pg_run"].initial.values()]


def test_a_comparison_starts_fresh_from_the_lessons_initial_weights_and_the_link_follows():
    lesson = LESSONS["overfitting"]
    at = open_page("pages/playground.py", {"lesson": "overfitting"})
    first = initial_weights(at)
    at.button(key="pg_epoch").click().run()
    at.button(key="pg_epoch").click().run()
    assert at.session_state["pg_run"].trainer.step_count > 0  # the first run has trained
    at.button(key="pg_lesson_then").click().run()  # "Add weight decay 0.01"
    run = at.session_state["pg_run"]
    assert run.trainer.step_count == 0 and run.trainer.status != "done"  # fresh, ready to play
    assert all(a.equal(b) for a, b in zip(first, initial_weights(at), strict=True))  # the same start
    _, setup = lesson.compare[0]
    assert run.settings == pg.from_query(setup.query)[0] and run.settings.weight_decay == 0.01
    assert written(at) == lesson.link(setup)  # the address bar: the compared setup, the lesson kept
    assert not at.exception


def test_every_comparison_a_lesson_promises_has_its_button():
    at = open_page("pages/playground.py", {"lesson": "learning-rate"})
    labels = [b.label for b in at.button if b.key and b.key.startswith("pg_lesson_then")]
    assert labels == [label for label, _ in LESSONS["learning-rate"].compare]
    assert "Try lr = 0.3" in labels
    at.button(key="pg_lesson_then2").click().run()
    assert at.session_state["pg_settings"].lr == 0.3


def test_the_engines_lesson_runs_both_engines_without_a_hidden_step():
    at = open_page("pages/playground.py", {"lesson": "engines"})
    assert at.toggle(key="pg_compare").value and at.session_state["pg_run"].twin is not None
    at.button(key="pg_epoch").click().run()
    assert any("Engines side by side" in c.value for c in at.caption)


def test_the_init_lesson_keeps_its_panel_on_the_playground_with_both_inits_a_click_away():
    lesson = LESSONS["init"]
    (_, small), (_, he) = lesson.compare
    at = open_page("pages/playground.py", lesson.link(small))
    assert at.session_state["pg_lesson"] == "init" and lesson.watch_on("playground") in markdown(at)
    assert lesson.watch not in markdown(at)  # the forward page's sentence stays there
    assert at.session_state["pg_settings"].init == "normal"
    at.button(key="pg_lesson_then2").click().run()  # "The same 8 layers with He init"
    assert at.session_state["pg_settings"] == pg.from_query(he.query)[0]
    at.button(key="pg_lesson_then").click().run()
    assert at.session_state["pg_settings"].init == "normal"
    assert not at.exception


def test_the_teacher_lesson_trains_its_student_in_the_app_and_shows_its_curve():
    at = open_page("pages/forward_backward.py", {"lesson": "teacher"}, timeout=60)
    assert at.session_state["fb_settings"].source == "teacher"
    assert "The whole task." in markdown(at)
    at.button(key="fb_teacher_train").click().run(timeout=120)
    assert not at.exception
    _, curve = at.session_state["fb_teacher_curve"]
    assert curve["train_loss"][-1] < 0.5 * curve["train_loss"][0]  # it learned the teacher's labels
    caption = next(c.value for c in at.caption if c.value.startswith("Train loss"))
    assert f"test accuracy {curve['val_acc'][-1]:.1%}" in caption


def test_a_lesson_stays_chosen_across_pages_and_its_other_pages_button_loads_it_there():
    lesson = LESSONS["init"]
    at = open_page("pages/forward_backward.py", {"lesson": "init"})
    assert at.session_state["fb_lesson"] == "init"
    at.switch_page("pages/playground.py").run()  # the sidebar's navigation: no lesson in the link
    at.switch_page("pages/forward_backward.py").run()  # and back: the panel is still there
    assert at.session_state["fb_lesson"] == "init" and lesson.watch in markdown(at)
    at.session_state["fb_init"] = "kaiming"  # the visitor changes something...
    at.run()
    at.query_params.update(lesson.link(lesson.setup) | {"load": "1"})  # ...then follows "Lesson's setup"
    at.switch_page("pages/forward_backward.py").run()
    assert at.session_state["fb_settings"].init == "normal"  # loaded again, though seen before
    assert "load" not in written(at)  # the page's own link drops the marker
    assert not at.exception
