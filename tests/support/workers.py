"""How the suite shares the machine's two cores: pytest-xdist workers (pyproject.toml:
`-n auto --maxprocesses 2 --dist loadfile`; a file stays on one worker, so its module-
and session-scoped servers start once).

- Each worker computes on its share of the cores (`pytest_configure`: OMP_NUM_THREADS,
  inherited by the servers, kernels and AppTests it starts). With two workers each running
  as many OpenMP threads as the machine has cores, small tensor operations spent most of
  their time waiting for a thread whose core the other worker held (the pretrained, lens
  and reader tests on two workers: 109 s with the default threads, 25 s with one each).
- The longest files start first (`LONGEST_FIRST`, measured with --durations on a clean
  clone): a long walk left to the end would run alone while the other worker sits idle.
  Files are named without their folder; each name in the table is unique under tests/.
- A test marked `alone` runs with the other worker paused. Such a test measures pace on
  the user's clock (the train walk counts the snapshots a live run paints in ~10 s), which
  the other worker's browser and server would otherwise eat. Two file locks shared by the
  workers of one run: every test holds `run` shared; an `alone` test first takes `intent`
  (new tests wait on it), then `run` exclusively (it waits for the test in progress).
  The `load` tests (`pytest -m load`: a class's latencies) run alone too.
With `-n 0` (one process) the locks are no-ops; the order stays.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

LONGEST_FIRST = (
    "test_lecturer_walk.py",
    "test_monkey.py",
    "test_language_browser.py",
    "test_load.py",
    "test_train_browser.py",
    "test_pages_widgets_browser.py",
    "test_write_browser.py",  # ~30 s: a decoder writing on a projector, a phone, a class
    "test_jupyterlab_widget_browser.py",  # ~25 s: JupyterLab started, a widget clicked
    "test_heatmaps_browser.py",
    "test_classroom_browser.py",
    "test_presenter_browser.py",  # ~50 s: 4 to 40 tokens on a projector, both languages
    "test_notebook_browser.py",  # ~35 s: the notebook executed, its saved views painted
    "test_hostile_browser.py",
    "test_replicas.py",
    "test_lens_browser.py",  # ~40 s: a 512-token text's head view and ablation
    "test_atlas.py",  # ~25 s: builds, a killed build, MiniLM and a tiny model
    "test_page_write.py",  # ~20 s: the page in both languages, every control
    "test_transformer_lens.py",  # ~20 s: bridges around tiny Llama and Qwen2
    "test_atlas_browser.py",
    "test_long_map_browser.py",
    "test_pretrained_long_browser.py",  # ~40 s: a tiny Llama at 4 096 tokens, two viewports
    "test_page_heatmaps_long.py",
    "test_scale_pages_browser.py",
    "test_class_walk_browser.py",
    "test_reachable_link_browser.py",
    "test_page_pretrained_long.py",
    "test_classroom_security_browser.py",
    "test_readable_heatmaps_browser.py",
    "test_reader_browser.py",
    "test_models_browser.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """On an xdist worker, before any test module imports torch: threads = cores / workers
    (a thread count the user set is kept)."""
    workers = getattr(config, "workerinput", {}).get("workercount")
    if workers:
        threads = max(1, (os.cpu_count() or 1) // int(workers))
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (a stable sort: each file's own order is kept)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@contextmanager
def _locked(path: Path, mode: int) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, mode)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _turn(alone: bool) -> Iterator[None]:
    """This test's turn on the machine (see the module's docstring)."""
    run_id = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run_id:  # one process: nothing to share
        yield
        return
    base = Path(tempfile.gettempdir()) / f"attention-studio-pytest-{run_id}"
    intent, run = base.with_suffix(".intent"), base.with_suffix(".run")
    with ExitStack() as held:
        if alone:
            held.enter_context(_locked(intent, fcntl.LOCK_EX))
            held.enter_context(_locked(run, fcntl.LOCK_EX))
        else:
            with _locked(intent, fcntl.LOCK_SH):  # waits while an `alone` test is due
                held.enter_context(_locked(run, fcntl.LOCK_SH))
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Setup, call and teardown of `item` in its turn."""
    alone = any(item.get_closest_marker(name) for name in ("alone", "load"))
    with _turn(alone):
        return (yield)
