"""Settings shared by every test: the suite runs offline, and artifacts go to tests/artifacts/.

The Hugging Face switches are set at import, before any test module imports transformers,
so nothing in the suite can reach a hub even by accident (the project's OFFLINE rule).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from attention_core.pretrained import LoadedModel

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

# Nothing the suite runs reads or writes the user's caches (a corpus, atlas indexes): each
# test process, and every server and AppTest it starts, gets an empty cache folder of its
# own, as on a machine that never ran the project. Tests that need a corpus or an index
# build one in their own temporary folder.
_EMPTY_CACHE = Path(tempfile.mkdtemp(prefix="attention-studio-test-cache-"))
atexit.register(shutil.rmtree, _EMPTY_CACHE, ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = str(_EMPTY_CACHE)
for _name in [n for n in os.environ if n.startswith("ATTENTION_STUDIO_")]:
    del os.environ[_name]

ARTIFACTS_DIR = Path(__file__).resolve().parent / "artifacts"  # git-ignored

# The suite's two workers (pytest-xdist): each on its share of the cores, longest files
# first, `alone` tests with the other worker paused. Imported so that pytest finds the
# hooks in this conftest.
from tests.support.workers import (  # noqa: E402, F401
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_protocol,
)


@pytest.fixture(scope="session", autouse=True)
def _one_component_scan() -> Iterator[None]:
    """Streamlit's AppTest looks through every installed distribution's metadata for custom
    components once per AppTest: about 0.8 s of a 1 s page test on the 2-core machine (some
    290 distributions). The installed packages do not change while the suite runs, so the
    first scan of a test process serves all its AppTests."""
    from streamlit.components.v2 import manifest_scanner

    scan = functools.cache(manifest_scanner.scan_component_manifests)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(manifest_scanner, "scan_component_manifests", scan)
        yield


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """tests/artifacts/ (created on demand): screenshots, server logs, exported files."""
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS_DIR


@pytest.fixture(scope="session")
def minilm() -> Path:
    """The packaged all-MiniLM-L6-v2 folder: skips locally, fails under CI without it.

    Used through `availability.needs_minilm` (pytest.mark.usefixtures("minilm")). Imported
    here, not at the top: attention_core must not load before the offline switches are set."""
    from tests.support.availability import require_minilm

    return require_minilm()


@pytest.fixture(scope="module")
def loaded() -> Iterator[LoadedModel]:
    """The packaged all-MiniLM-L6-v2 through load_model, offline, once per test module
    (tests/core/pretrained/test_pretrained.py, tests/core/lens/test_lens.py); skips locally, fails
    under CI without it."""
    from attention_core.pretrained import load_model
    from tests.support.availability import require_minilm

    require_minilm()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield load_model()


@pytest.fixture(autouse=True)
def _streamlit_navigation_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Run AppTest the way `streamlit run` runs the app after its first script run.

    The repo has a `pages/` folder, and AppTest re-detects Streamlit's legacy multipage
    mode before every run, so a rerun would execute the current page file without app.py
    (no sidebar, settings lost). A running server leaves that mode for good once app.py
    has called st.navigation. Tests marked `legacy_pages` keep the detection, to test the
    app's own guard against it (ui.common.entry_guard).
    """
    if request.node.get_closest_marker("legacy_pages"):
        return
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
