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
  xdist would otherwise reorder the files by their number of tests, many first, which
  leaves the one-test walks to the end: `--no-loadscope-reorder` (pyproject.toml) keeps
  this order.
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

LONGEST_FIRST = (  # seconds each file took on a 2-core machine (--durations, both workers busy)
    "test_pages_widgets_browser.py",  # 130 s
    "test_lecturer_walk.py",  # 113 s
    "test_reader.py",  # 102 s
    "test_train_browser.py",  # 78 s
    "test_presenter_browser.py",  # 74 s
    "test_lens_browser.py",  # 55 s
    "test_notebook_browser.py",  # 55 s
    "test_heatmaps_browser.py",  # 54 s
    "test_readable_heatmaps_browser.py",  # 50 s
    "test_pretrained_long_browser.py",  # 46 s
    "test_hostile_browser.py",  # 42 s
    "test_scale_pages_browser.py",  # 40 s
    "test_replicas.py",  # 39 s
    "test_load.py",  # 36 s
    "test_jupyterlab_widget_browser.py",  # 33 s
    "test_monkey.py",  # 33 s
    "test_language_browser.py",  # 29 s
    "test_write_browser.py",  # 28 s
    "test_page_pretrained_long.py",  # 28 s
    "test_classroom_security_browser.py",  # 27 s
    "test_protocol.py",  # 24 s
    "test_explain_browser.py",  # 24 s
    "test_families.py",  # 23 s
    "test_reachable_link_browser.py",  # 23 s
    "test_atlas_browser.py",  # 22 s
    "test_hostile_input.py",  # 22 s
    "test_classroom_browser.py",  # 21 s
    "test_class_walk_browser.py",  # 17 s
    "test_reader_browser.py",  # 17 s
    "test_phone_class_browser.py",  # 15 s
    "test_page_atlas.py",  # 14 s
    "test_teaching_pages.py",  # 14 s
    "test_long_map_browser.py",  # 13 s
    "test_page_heatmaps_long.py",  # 13 s
    "test_where_class_browser.py",  # 12 s
    "test_masks_fit_browser.py",  # 12 s
    "test_models_browser.py",  # 12 s
    "test_atlas.py",  # 11 s
    "test_project.py",  # 11 s
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
