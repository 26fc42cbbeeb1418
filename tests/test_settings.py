"""What every page's settings share (mlp.links.settings): ranges, their words, the link form."""

import pytest

from mlp.lessons.forward_backward import SPECS as FORWARD_SPECS
from mlp.lessons.forward_backward import ForwardSettings
from mlp.links.settings import read_link
from mlp.spec import Spec, number_text


@pytest.mark.parametrize(
    ("value", "text"),
    [(2**31 - 1, "2147483647"), (0, "0"), (10.0, "10"), (1e-4, "0.0001"), (0.05, "0.05")],
)
def test_limits_are_written_as_people_write_them(value, text):
    assert number_text(value) == text


def test_a_seed_out_of_range_names_the_largest_seed_in_full():
    assert Spec("seed", 0, 2**31 - 1).problem(-1) == "must be between 0 and 2147483647"
    _, _, notes = read_link({"seed": "-1"}, ForwardSettings(), FORWARD_SPECS)
    assert notes[0].reason == "seed must be between 0 and 2147483647"
    _, _, notes = read_link({"seed": "lucky"}, ForwardSettings(), FORWARD_SPECS)
    assert notes[0].reason == "seed must be a whole number between 0 and 2147483647"
    with pytest.raises(ValueError, match=r"seed must be between 0 and 2147483647; got -1\."):
        ForwardSettings(seed=-1)


def test_a_setting_declared_once_reaches_the_sidebar_the_link_the_checks_and_the_training():
    """Momentum is declared once, on TrainConfig (mlp/train/config.py); the playground's field
    takes that declaration (train_setting): nothing else was written for it."""
    from mlp.lessons import playground as pg
    from tests.conftest import open_page

    settings = pg.Settings(optimizer="momentum", momentum=0.5)
    assert settings.train_config(100, "classify").momentum == 0.5  # the training config
    assert pg.to_query(settings)["mom"] == "0.5"  # the link, written
    assert pg.from_query({"mom": "0.5"})[0].momentum == 0.5  # and read
    assert pg.from_query({"mom": "1.5"})[1][0].key == "mom"  # the checks: past the last stop
    at = open_page("pages/playground.py", {"opt": "momentum", "mom": "0.99"})
    slider = at.select_slider(key="pg_momentum")  # the sidebar: its widget, under Training
    assert slider.label == "Momentum" and slider.value == 0.99 and slider.options[-1] == "0.99"
    assert at.session_state["pg_run"].trainer.cfg.momentum == 0.99


# The pages' settings that mean something other than TrainConfig's setting of the same link name
# (the playground's batch size: 0 is "the whole set", which train_config turns into a number).
OWN_MEANING = {("playground", "batch_size")}


def page_settings():
    from mlp.lessons import mnist, playground

    return {"playground": playground.Settings, "mnist": mnist.MnistSettings}


@pytest.mark.parametrize("page", ["playground", "mnist"])
def test_a_pages_training_settings_narrow_trainconfigs_declarations_never_restate_them(page):
    """Each training setting is declared once, on TrainConfig (its default, range, link name,
    label, help, when it applies); a page takes that declaration and may narrow it, never widen
    it or declare its own."""
    from dataclasses import MISSING, fields

    from mlp.links.settings import TRAINED
    from mlp.spec import SPEC
    from mlp.train import TrainConfig
    from mlp.train.config import TRAIN_SPECS

    declared = {f.name: f for f in fields(TrainConfig)}
    for f in fields(page_settings()[page]):
        spec, library = f.metadata[SPEC], TRAIN_SPECS.get(f.name)
        if library is None or (page, f.name) in OWN_MEANING:
            continue
        assert f.metadata.get(TRAINED) == f.name, f"{page}'s {f.name} is declared again, not narrowed"
        assert spec.key == library.key and spec.help == library.help and spec.applies is library.applies
        if library.choices is not None:
            assert set(spec.choices) <= set(library.choices)
        else:
            assert library.low <= spec.low <= spec.high <= library.high, (page, f.name)
        if f.default != declared[f.name].default:  # a page's own default: within the range
            assert spec.problem(f.default) is None
        assert declared[f.name].default is not MISSING


def test_which_settings_apply_is_declared_with_the_setting_and_the_pages_follow_it():
    from mlp.train.config import TRAIN_SPECS
    from mlp.train.optimizers import OPTIMIZERS
    from tests.conftest import open_page

    momentum = TRAIN_SPECS["momentum"]
    assert {name for name in OPTIMIZERS if momentum.applies_to({"optimizer": name})} == {
        "momentum",
        "nesterov",
    }
    at = open_page("pages/playground.py", {"opt": "sgd"})
    assert at.select_slider(key="pg_momentum").disabled
    at.selectbox(key="pg_optimizer").set_value("nesterov").run()
    assert not at.select_slider(key="pg_momentum").disabled
    at.radio(key="pg_engine").set_value("manual").run()
    assert at.slider(key="pg_dropout").disabled  # the manual engine has no dropout
    mnist = open_page("pages/mnist.py", {"opt": "adam"})
    assert mnist.select_slider(key="mn_momentum").disabled
