"""What every page's settings share (mlp.links.settings): ranges, their words, the link form."""

import pytest

from mlp.lessons.forward_backward import SPECS as FORWARD_SPECS
from mlp.lessons.forward_backward import ForwardSettings
from mlp.links.settings import Spec, number_text, read_link


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
    """Momentum was added to the playground as one field (mlp/lessons/playground.py) with a spec
    shared from mlp/links/settings.py: nothing else was written for it."""
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
