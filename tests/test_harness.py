"""The browser tests' own instruments, checked without a browser: the rerun counter that
wait_for_app waits on (tests/harness.py's RUNS_JS) reads Streamlit's real messages right."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.harness import RUNS_JS

NODE = shutil.which("node")

# A stand-in for the browser's WebSocket: send() is the one RUNS_JS wraps, deliver() plays a
# message from the server to the listeners a page (and RUNS_JS) added.
FAKE_SOCKET = """
globalThis.window = globalThis;
globalThis.WebSocket = class {
  constructor(url) { this.url = url; this.listeners = []; }
  addEventListener(type, listener) { if (type === "message") this.listeners.push(listener); }
  send(data) {}
  deliver(bytes) { for (const listener of this.listeners) listener({ data: Uint8Array.from(bytes).buffer }); }
};
"""


def messages() -> dict[str, list[int]]:
    """Streamlit's messages as its own protobufs serialize them, as lists of bytes."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    rerun, beat = BackMsg(), BackMsg()
    rerun.rerun_script.query_string = "lr=0.03"
    rerun.rerun_script.widget_states.widgets.add().id = "pg_play"
    beat.app_heartbeat = True
    started, delta = ForwardMsg(), ForwardMsg()
    started.hash = "a" * 32
    started.new_session.name = "app"
    delta.hash = "b" * 32
    delta.metadata.delta_path[:] = [0, 6]
    delta.delta.new_element.markdown.body = "Epoch 3"

    def finished(status: int) -> ForwardMsg:
        msg = ForwardMsg(script_finished=status)
        msg.hash = "c" * 32
        msg.metadata.delta_path[:] = [0]
        return msg

    found = {
        "rerun": rerun,
        "heartbeat": beat,
        "started": started,
        "delta": delta,
        "finished": finished(ForwardMsg.FINISHED_SUCCESSFULLY),
        "fragment_finished": finished(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY),
        "ended_for_rerun": finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN),
    }
    return {name: list(msg.SerializeToString()) for name, msg in found.items()}


SCRIPT = """
const m = MESSAGES;
const app = new WebSocket("ws://127.0.0.1:1/_stcore/stream");
const frames = new WebSocket("ws://127.0.0.1:1/api/playground/frame");
const seen = [];
const note = (what) => seen.push([what, window.__mlpRuns.asked, window.__mlpRuns.answered]);
app.send(Uint8Array.from(m.heartbeat)); note("heartbeat sent");
app.send(Uint8Array.from(m.rerun)); note("a click's rerun asked");
app.deliver(m.delta); note("a delta of the run before");
app.deliver(m.ended_for_rerun); note("the run before ended for it");
app.deliver(m.started); note("its run started");
app.send(Uint8Array.from(m.rerun)); app.send(Uint8Array.from(m.rerun).buffer); note("two more asked");
app.deliver(m.finished); note("a run finished");
app.send(Uint8Array.from(m.rerun)); app.deliver(m.fragment_finished); note("a fragment's run finished");
frames.send(Uint8Array.from(m.rerun)); note("the same bytes on the frame socket");
console.log(JSON.stringify(seen));
"""


@pytest.mark.skipif(NODE is None, reason="needs Node.js (CI has it: .ci/run)")
def test_the_rerun_counter_reads_streamlits_own_messages():
    script = FAKE_SOCKET + RUNS_JS + ";\n" + SCRIPT.replace("MESSAGES", json.dumps(messages()))
    done = subprocess.run([NODE, "-e", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["heartbeat sent", 0, 0],
        ["a click's rerun asked", 1, 0],
        ["a delta of the run before", 1, 0],
        ["the run before ended for it", 1, 0],
        ["its run started", 1, 1],
        ["two more asked", 3, 1],
        ["a run finished", 3, 3],
        ["a fragment's run finished", 4, 4],
        ["the same bytes on the frame socket", 4, 4],
    ]
