"""pages/ui/internals.py against the installed Streamlit: each thing the app takes from beyond
Streamlit's public API is still where the app reaches for it. An upgrade that moves one fails
here, naming what breaks, before a hosted demo does."""

import inspect
from pathlib import Path

import streamlit

from pages.ui import internals


def test_1_the_pages_directory_mode_is_still_a_flag_the_script_runner_reads():
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import script_runner

    assert "uses_pages_directory" in vars(PagesManager), "Streamlit renamed PagesManager.uses_pages_directory"
    source = inspect.getsource(script_runner)
    assert "if PagesManager.uses_pages_directory:" in source and "_mpa_v1(" in source, (
        "Streamlit no longer chooses its pages-directory mode this way: the first page a fresh "
        "server serves would show without app.py's shell"
    )


def test_2_a_reconnecting_browsers_widget_values_are_still_kept_without_metadata():
    from streamlit.runtime.state.safe_session_state import SafeSessionState
    from streamlit.runtime.state.session_state import SessionState, WStates

    state = SafeSessionState(SessionState(), lambda: None)
    widgets = state._state._new_widget_state
    assert isinstance(widgets, WStates) and widgets.states == {} and widgets.widget_metadata == {}
    assert "reconnecting browser" in inspect.getsource(WStates.__getitem__), (
        "Streamlit no longer keeps a reconnecting browser's widget values without metadata: "
        "the 'server went away' notice would never show"
    )


def test_3_a_fragment_timer_is_still_the_auto_rerun_message_with_the_fragments_id():
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    assert internals.ThreadState is not None, "Streamlit moved ThreadState: slow panels would not retime"
    from streamlit.runtime.scriptrunner_utils.script_run_context import FragmentThreadState

    assert "get" in vars(internals.ThreadState), "ThreadState.get() is gone"
    fields = {f.name for f in FragmentThreadState.__dataclass_fields__.values()}
    assert "fragment_id" in fields, "a run's state no longer knows its fragment: slow panels would not retime"
    msg = ForwardMsg()
    msg.auto_rerun.interval, msg.auto_rerun.fragment_id = 2.0, "f"
    assert msg.WhichOneof("type") == "auto_rerun"
    assert "fragment_ids_this_run" in {f.name for f in ScriptRunContext.__dataclass_fields__.values()}


def test_4_every_test_id_the_styles_use_is_in_streamlits_frontend():
    bundle = Path(streamlit.__file__).parent / "static" / "static" / "js"
    text = "".join(path.read_text(errors="ignore") for path in bundle.glob("*.js"))
    missing = [test_id for test_id in internals.TEST_IDS if test_id not in text]
    assert not missing, f"Streamlit's frontend no longer has {missing}: projector mode's styles miss them"


def test_the_styles_use_only_the_test_ids_listed_and_only_internals_has_styles_keyed_to_them():
    import re
    from pathlib import Path

    styles = "".join(v for k, v in vars(internals).items() if k.endswith("_CSS"))  # every style
    assert set(re.findall(r'data-testid\^?="(\w+)"', styles)) == set(internals.TEST_IDS)
    root = Path(internals.__file__).parents[2]  # and no other module of the app keys a style to one
    for path in [root / "app.py", *(root / "pages").rglob("*.py")]:
        if path.name != "internals.py":
            assert "data-testid" not in path.read_text(), path
