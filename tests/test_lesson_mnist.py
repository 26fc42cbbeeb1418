"""The MNIST page's model: settings and links, a run as a background job, a visitor's session."""

import gc
import threading
import time

import numpy as np
import pytest
import torch

from mlp.data import load_sample
from mlp.errors import OUT_OF_MEMORY, UNEXPECTED
from mlp.io import model_to_bytes
from mlp.lessons.mnist import CLASS_EPOCH_SECONDS, SPECS, MnistSettings, from_query, from_widgets, to_query
from mlp.metrics import neighbour_correlation
from mlp.runs.exports import mnist_files
from mlp.runs.mnist import MnistRun, MnistSession, first_layer_weights, predict, predictor
from pages.serving.jobs import Executor
from tests.conftest import blas_threads


@pytest.fixture(scope="module")
def sample():
    return load_sample("the tests use it")


@pytest.fixture
def executor():
    return Executor(slots=1)


def settings(**changes) -> MnistSettings:
    return MnistSettings(**({"lr": 2e-3, "batch_size": 64, "epochs": 2, "device": "cpu"} | changes))


@pytest.mark.slow
def test_the_bundled_sample_trains_past_90_percent_within_10_epochs(sample, executor):
    session = MnistSession()
    session.start(sample, settings(epochs=10), executor)
    assert session.job.wait(timeout=300) and session.sync()
    view = session.view()
    assert view.status == "done" and view.step == view.total_steps and view.epoch == 10
    evaluation = view.evaluation
    assert evaluation.accuracy >= 0.90  # on the 1,000 held-out digits
    assert evaluation.confusion.sum() == 1000
    assert np.trace(evaluation.confusion) == round(evaluation.accuracy * 1000)
    assert len(view.curves["train"]["epoch"]) >= 10 * 9  # points within epochs, not only at their ends
    assert len(view.curves["val"]["epoch"]) == 10 and view.curves["val"]["val_acc"][-1] > 0.85
    assert session.runs[0].test_accuracy == evaluation.accuracy and session.runs[0].epochs == 10


def test_a_run_trains_in_the_background_and_the_page_reads_only_views(sample, executor):
    session = MnistSession()
    session.start(sample, settings(epochs=3), executor)
    assert session.running and session.sync() is False  # nothing to collect while it trains
    first = session.job.view
    assert session.job.wait(timeout=120)
    assert session.view() is session.job.view and session.view().status == "done"  # before collecting
    assert session.sync() is True and session.sync() is False  # collected once
    view = session.view()
    assert view is not first and view.status == "done" and view.evaluation is not None
    assert view.weights is not None and all(w.device.type == "cpu" for w in view.weights.values())
    run_weights = session.run.model.state_dict()
    assert all(torch.equal(view.weights[k], run_weights[k]) for k in run_weights)  # a copy of the final
    assert view.weights["layers.0.weight"].data_ptr() != run_weights["layers.0.weight"].data_ptr()
    assert [label for label, _ in view.metrics] == [
        "Epoch",
        "Samples / s",
        "Epoch time",
        "Test accuracy",  # the ETA's place, once the run has ended
        "Val. accuracy",
    ]


def test_stop_lands_within_a_step_and_keeps_the_model(sample, executor):
    session = MnistSession()
    session.start(sample, settings(epochs=50, batch_size=16), executor)
    trainer = session.job.work.trainer
    while session.job.view.step < 100:
        session.job.wait(0.01)
    at_stop = trainer.step_count
    session.stop()
    assert session.job.wait(timeout=30)
    assert trainer.step_count - at_stop <= 1  # the step under way when Stop came, at most
    assert session.job.state == "stopped" and "keeps what it learned" in session.job.message
    session.sync()
    assert session.view().evaluation.accuracy > 0.5 and 0 < session.view().epoch < 50
    assert session.runs[-1].name == "run 1"


def test_a_second_job_queues_when_the_executor_is_full_and_says_its_place(sample, executor):
    first, second, third = MnistSession(), MnistSession(), MnistSession()
    first.start(sample, settings(epochs=50), executor)
    while first.job.state != "running":
        first.job.wait(0.01)
    second.start(sample, settings(epochs=1), executor)
    third.start(sample, settings(epochs=1), executor)
    assert second.job.state == "queued" and (second.job.position, third.job.position) == (0, 1)
    assert "yours is next" in second.banner()[1] and "1 run wait ahead of yours" in third.banner()[1]
    assert third.sidebar_status() == "MNIST: run 1 waiting, number 2 in the queue"
    assert executor.load == (1, 2)
    third.stop()  # leaving the queue: nothing trained, nothing kept
    assert third.job.state == "stopped" and executor.load == (1, 1) and second.job.position == 0
    first.stop()
    assert second.job.wait(timeout=120) and second.job.state == "done"


def test_a_job_whose_page_is_gone_is_cancelled_and_frees_its_slot(sample, executor):
    session = MnistSession()
    session.start(sample, settings(epochs=100), executor)
    job = session.job
    while job.state != "running":
        job.wait(0.01)
    del session
    gc.collect()  # what Streamlit's dropping of an expired session leads to
    assert job.wait(timeout=30) and job.state == "cancelled" and job.message == "Its page closed."
    assert executor.load == (0, 0)
    after = MnistSession()
    after.start(sample, settings(epochs=1), executor)
    assert after.job.wait(timeout=120) and after.job.state == "done"


def test_the_sidebar_line_follows_the_run(sample, executor):
    session = MnistSession()
    assert session.sidebar_status() is None
    session.start(sample, settings(epochs=40), executor)
    while session.job.state != "running" or session.job.view.epoch < 1:
        session.job.wait(0.01)
    assert session.sidebar_status().startswith("MNIST: run 1 training, epoch ")
    assert session.sidebar_status().endswith("/40")
    session.stop()
    session.job.wait(30)
    assert session.sidebar_status() is None


def test_predictions_during_training_use_the_weights_of_the_last_epoch(sample, executor):
    session = MnistSession()
    assert session.predictor() is None
    session.start(sample, settings(epochs=30), executor)
    while session.job.view.weights is None:  # published at the end of the first epoch
        session.job.wait(0.01)
    for _ in range(100):  # two asks between two epochs' ends (training publishes as it goes)
        published = session.view().weights
        model, again = session.predictor(), session.predictor()
        if session.view().weights is published:
            break
    assert model is again  # one copy per published set of weights
    probs = predict(model, sample.x_test[0])
    assert probs.shape == (10,) and abs(probs.sum() - 1) < 1e-5
    session.stop()


def test_a_model_file_loads_back_as_a_finished_evaluated_run(sample, executor):
    session = MnistSession()
    session.start(sample, settings(epochs=1), executor)
    session.job.wait(120)
    session.sync()
    trained = session.run
    session.load(sample, model_to_bytes(trained.model), "mine.safetensors", "id-1")
    assert session.run is not trained and session.ready and session.loaded_file == "id-1"
    assert session.job is None and session.view().name == "mine.safetensors"
    assert (session.view().evaluation.predicted == trained.evaluation.predicted).all()
    assert [r.name for r in session.runs] == ["run 1", "mine.safetensors"]
    with pytest.raises(ValueError, match="not a safetensors model file"):
        session.load(sample, b"not a model", "notes.txt", "id-2")
    assert session.view().name == "mine.safetensors"  # what was there stays


def test_mistakes_weights_and_schedule(sample):
    run = MnistRun(sample, settings(epochs=4, scheduler="cosine", warmup_epochs=1, lr=0.01))
    run.advance(2)
    mistakes = run.evaluate().mistakes(sample.y_test, limit=5)
    assert len(mistakes) == 5 and all(m["top3"][0][0] != m["true"] for m in mistakes)
    confidences = [m["top3"][0][1] for m in mistakes]
    assert confidences == sorted(confidences, reverse=True)
    view = run.view()
    assert first_layer_weights(view.weights, 16).shape == (16, 28, 28)
    model = predictor(view.weights, view.config)
    assert np.allclose(predict(model, sample.x_test[3]), run.evaluation.probs[3], atol=1e-6)
    epochs, lrs = view.schedule
    assert epochs[0] == 0 and epochs[-1] == pytest.approx(4, abs=0.05)
    assert lrs.max() == pytest.approx(0.01, rel=0.05) and lrs[-1] < 0.001


def test_settings_round_trip_through_a_link_and_the_sidebar():
    chosen = MnistSettings(hidden=(256, 64), activation="gelu", lr=3e-3, batch_size=64, epochs=12, seed=7)
    assert from_query(to_query(chosen)) == (chosen, [])
    linked, notes = from_query({"lr": "9", "hidden": "64-x", "epochs": "12"})
    assert linked == MnistSettings(epochs=12) and [n.key for n in notes] == ["lr", "hidden"]
    widgets = {k: v for k, v in chosen.__dict__.items()} | {"hidden": "32, 16", "amp": True, "compile": True}
    on_cpu, problems = from_widgets(widgets, chosen, device_kind="cpu")
    assert on_cpu.hidden == (32, 16) and not on_cpu.amp and not on_cpu.compile and problems == []
    assert from_widgets(widgets, chosen, device_kind="cuda")[0].amp is True
    kept, problems = from_widgets(widgets | {"hidden": "32, many"}, chosen, device_kind="cpu")
    assert kept.hidden == (256, 64) and "'many' is not a whole number" in str(problems[0])


@pytest.mark.slow
def test_the_first_layer_shows_strokes_after_a_default_run_not_static(sample):
    run = MnistRun(sample, MnistSettings(device="cpu"))  # the page's defaults
    start = neighbour_correlation(first_layer_weights(run.model.state_dict()))
    run.trainer.fit()
    run.finish()
    view = run.view()
    learned = neighbour_correlation(first_layer_weights(view.weights, start=view.first_layer_start))
    assert abs(start) < 0.1  # random He init: static
    assert learned > 0.5  # measured 0.79: neighbouring pixels move together, strokes


def test_the_structure_measure_tells_static_from_strokes():
    rng = np.random.default_rng(0)
    static = rng.normal(size=(8, 28, 28))
    strokes = np.zeros((8, 28, 28))
    strokes[:, 10:18, 4:24] = 1.0  # a bar
    assert abs(neighbour_correlation(static)) < 0.1 and neighbour_correlation(strokes) > 0.8


@pytest.mark.slow
def test_a_job_no_page_looks_at_is_cancelled_after_its_keepalive_and_a_watched_one_is_not(sample):
    # A closed tab's session may never be dropped on a quiet server: the run must notice anyway.
    executor = Executor(slots=2)
    watched, left = MnistSession(), MnistSession()
    long_run = settings(epochs=100, hidden=(512, 512), batch_size=16)  # minutes, however fast a step gets
    watched.start(sample, long_run, executor, keepalive=0.5)
    left.start(sample, long_run, executor, keepalive=0.5)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # the visitor's page polls its run; the other tab is gone
        assert watched.view() is not None and watched.sidebar_status() is not None
        time.sleep(0.05)
    assert left.job.wait(timeout=30) and left.job.state == "cancelled"
    assert left.job.message == "Its page closed." and left.banner() == ("error", "Its page closed.")
    assert watched.running
    watched.stop()
    assert watched.job.state == "stopped"


@pytest.mark.slow
def test_the_largest_model_the_page_trains_loads_back_through_its_uploader(sample):
    """784-2048×4-10 saved as the page saves it (a 56.9 MB file), then loaded as the page loads it."""
    import tomllib

    from mlp.lessons.mnist import LARGEST, MAX_MODEL_MB
    from tests.conftest import ROOT

    largest = settings(hidden=tuple(LARGEST.hidden), epochs=1)
    assert largest.model_config() == LARGEST  # nothing wider or deeper passes the sidebar
    with pytest.raises(ValueError):
        settings(hidden=(*LARGEST.hidden, 1))
    with pytest.raises(ValueError):
        settings(hidden=(LARGEST.hidden[0] + 1,))
    run = MnistRun(sample, largest, "run 1")
    _, make, _ = mnist_files(run)[0]
    data = make()
    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]["maxUploadSize"]
    assert len(data) > 56 * 10**6  # (what the uploader refused before: its limit was 56 MB)
    assert len(data) <= MAX_MODEL_MB * 10**6 <= server * 2**20  # the browser's count, then the server's

    session = MnistSession()
    session.load(sample, data, "mnist-mlp.safetensors", "id-1")
    assert session.ready and session.run.settings.hidden == largest.hidden
    for name, tensor in run.model.state_dict().items():
        assert torch.equal(session.run.model.state_dict()[name], tensor), name


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (RuntimeError("tensor '[x](http://127.0.0.1:9/)' at /srv/secret"), UNEXPECTED),
        (RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"), OUT_OF_MEMORY),
    ],
)
def test_a_failed_run_says_what_it_means_never_its_errors_text(sample, executor, fault, said, caplog):
    run = MnistRun(sample, settings())

    def fail(seconds: float) -> None:
        raise fault

    run.advance = fail
    job = executor.submit(run, "run 1")
    assert job.wait(timeout=60)
    assert job.state == "failed" and job.message == f"Training failed. {said}"
    assert "/srv/secret" not in job.message and str(fault) in caplog.text  # the log keeps it


class Clock:
    """time.monotonic and time.sleep for mlp.runs.mnist: seconds pass only when slept or told."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


def test_at_a_class_pace_each_epoch_takes_its_seconds_however_fast_the_machine(sample, monkeypatch):
    clock = Clock()
    monkeypatch.setattr("mlp.runs.mnist.time", clock)
    run = MnistRun(sample, settings(pace="class", epochs=2))
    per_step = CLASS_EPOCH_SECONDS / run.trainer.steps_per_epoch
    seen = []
    while not run.finished:
        run.advance(0.1)  # as a job's worker does, chunk after chunk
        seen.append((clock.now - 100.0, run.trainer.step_count))
    assert all(steps <= elapsed / per_step + 1 + 1e-6 for elapsed, steps in seen)  # never ahead of the pace
    assert clock.now - 100.0 >= 2 * CLASS_EPOCH_SECONDS - per_step - 1e-9  # 2 epochs: 6 s of curves
    assert all(seconds <= 0.1 + 1e-9 for seconds in np.diff([0.0, *(e for e, _ in seen)]))  # a chunk each


def test_class_pace_is_where_projector_mode_starts_and_full_speed_is_the_default():
    assert MnistSettings().pace == "full" and MnistSettings().min_epoch_seconds == 0
    assert from_query({"pace": "class"})[0].min_epoch_seconds == CLASS_EPOCH_SECONDS
    assert SPECS["pace"].for_class == "class"


def test_a_jobs_threads_are_its_share_of_the_machines_cores_whatever_the_slots(monkeypatch):
    import pages.serving.jobs as jobs

    monkeypatch.setattr(jobs, "machine_cores", lambda: 8)
    monkeypatch.setenv("MLP_PLAYGROUND_TRAINING_JOBS", "1")  # a server set to one job at a time
    assert (jobs.Executor().slots, jobs.Executor().threads_per_job) == (1, 8)  # it gets every core
    monkeypatch.delenv("MLP_PLAYGROUND_TRAINING_JOBS")
    assert (jobs.Executor().slots, jobs.Executor().threads_per_job) == (8, 1)  # a job a core
    assert jobs.Executor(slots=3).threads_per_job == 2 and jobs.Executor(slots=16).threads_per_job == 1
    assert jobs.Executor(slots=2, threads_per_job=3).threads_per_job == 3  # asked for


class Held:
    """A job's work that trains until released, and records the threads it was given."""

    def __init__(self, wide: bool) -> None:
        self.wide, self.given, self.steps = wide, [], 0
        self.release, self.started = threading.Event(), threading.Event()
        self.finished, self.status = False, "done"

    def use_threads(self, n: int) -> None:
        self.given.append(n)

    def advance(self, seconds: float) -> None:
        self.started.set()
        self.finished = self.release.wait(seconds)

    def stop(self, reason: str) -> None:
        pass

    def interrupt(self) -> None:
        pass

    def finish(self) -> None:
        pass

    def view(self) -> int:
        return 0


def test_a_lone_job_trains_on_every_core_and_jobs_beside_others_on_their_share(monkeypatch):
    import pages.serving.jobs as jobs

    monkeypatch.setattr(jobs, "machine_cores", lambda: 8)
    executor = jobs.Executor(slots=4)  # a share is 2 cores
    lone, beside, narrow = Held(wide=True), Held(wide=True), Held(wide=False)
    first = executor.submit(lone)
    assert lone.started.wait(30)
    second = executor.submit(beside)  # starts while the first trains: its share
    assert beside.started.wait(30)
    lone.release.set(), beside.release.set()
    assert first.wait(30) and second.wait(30)
    assert (first.threads, lone.given, second.threads, beside.given) == (8, [8], 2, [2])
    third = executor.submit(narrow)  # alone, but not wide (a challenge's run): its share
    narrow.release.set()
    assert third.wait(30) and (third.threads, narrow.given) == (2, [2])


def test_a_challenges_mnist_run_is_never_wide_and_keeps_the_threads_it_began_on():
    data = load_sample()
    settings = MnistSettings(epochs=1, device="cpu")
    free, challenge = MnistRun(data, settings), MnistRun(data.challenge_part(), settings)
    assert free.wide and not challenge.wide  # its re-run at Close trains on a job's share
    free.use_threads(2)
    assert free.trainer.cfg.threads == 2 and free.train_cfg.threads == 2
    free.advance(0.05)
    free.use_threads(1)  # after its first step: the count it began on stays
    assert free.trainer.cfg.threads == 2 and not free.wide


def test_a_job_alone_among_playing_visitors_trains_on_its_share(monkeypatch):
    """A job on every core would hold NumPy's BLAS count, and visitors' frames wait for its chunks:
    it starts alone only when no frame trained for QUIET_SECONDS."""
    import pages.serving.jobs as jobs

    monkeypatch.setattr(jobs, "machine_cores", lambda: 8)
    monkeypatch.setattr(jobs, "quiet_for", lambda seconds: seconds != jobs.QUIET_SECONDS)
    work = Held(wide=True)
    job = jobs.Executor(slots=4).submit(work)
    work.release.set()
    assert job.wait(30) and (job.threads, work.given) == (2, [2])


@pytest.fixture
def counts_in_turns(monkeypatch, blas_as_it_was):
    """The process's BLAS count held in turns, as on a server (app.py), and put back after."""
    import mlp.device as device

    monkeypatch.setattr(device, "_COUNTS", device.ThreadCounts())
    return device._COUNTS


def test_on_a_server_every_step_of_a_job_runs_on_the_count_it_was_given(monkeypatch, counts_in_turns):
    """A job's count is NumPy's BLAS's while its steps run (the MNIST page's network takes the
    NumPy path): held around each chunk by the job, or by the run itself, which leaves a class
    pace's waits unheld; and the server's one thread again once it ends."""
    import pages.serving.jobs as jobs

    monkeypatch.setattr(jobs, "machine_cores", lambda: 2)
    executor = jobs.Executor(slots=2)
    work = Held(wide=True)
    seen = []
    advance = work.advance
    work.advance = lambda seconds: (seen.append(blas_threads()), advance(seconds))[1]
    job = executor.submit(work)
    assert work.started.wait(30)
    work.release.set()
    assert job.wait(30) and job.threads == 2 and set(seen) == {2}

    run = MnistRun(load_sample(), MnistSettings(epochs=1, device="cpu"), threads=executor.threads_per_job)
    counted, run_for = [], run.trainer.run_for
    run.trainer.run_for = lambda *a, **k: (counted.append(blas_threads()), run_for(*a, **k))[1]
    job = executor.submit(run)
    assert job.wait(120) and job.state == "done"
    assert job.threads == 2 and run.threads == 2 and counted and set(counted) == {2}
    assert (counts_in_turns.holders, blas_threads()) == (0, 1)
