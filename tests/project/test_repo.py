"""The project's promises about itself: the CI runs README's test command, torch is
pinned, and the library stays free of streamlit."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEST_COMMAND = "pip install -r requirements-dev.txt && pytest"
APP_COMMAND = "pip install -r requirements.txt && streamlit run app.py"


def test_readme_gives_the_two_commands_and_ci_runs_the_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert TEST_COMMAND in readme and APP_COMMAND in readme
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.strip().splitlines()[-1] == TEST_COMMAND
    for package in ("chromium", "fonts-noto-cjk"):
        assert package in ci


def test_torch_is_pinned():
    assert "torch==2.13.0" in (ROOT / "requirements.txt").read_text().splitlines()


def test_attention_core_never_imports_streamlit():
    for path in (ROOT / "attention_core").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import|from)\s+streamlit", text, re.M), path


def test_no_user_text_reaches_unsafe_html():
    for path in [ROOT / "app.py", *(ROOT / "pages").glob("*.py")]:
        assert "unsafe_allow_html" not in path.read_text(encoding="utf-8"), path


def test_attention_core_imports_from_any_folder_without_the_app_stack(tmp_path: Path) -> None:
    """A notebook elsewhere: the package finds its data, and importing it loads no
    streamlit, plotly or transformers (nor torch, until a module needs it)."""
    code = (
        "import sys, attention_core\n"
        "heavy = [m for m in ('streamlit', 'plotly', 'transformers', 'torch')\n"
        "         if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from attention_core.i18n import t\n"
        "assert t('handmade_title', 'zh-TW')\n"
        "print([x.label for x in attention_core.tokenize('中和有一個永和路')])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['中和', '有', '一個', '永和路']"


def test_the_long_views_load_torch_with_the_first_long_text_not_with_the_page() -> None:
    """The landing, Pretrained, Lens and Compare pages import the long views at their top:
    those must not bring torch (a second of import) into a page that never shows a long
    text; each long module imports it when the first long text arrives."""
    code = (
        "import sys\n"
        "import ui.long.view, ui.long.chart, ui.long.lens, ui.long.compare, ui.long.cache\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_ruff_finds_nothing_and_formats_nothing() -> None:
    """`ruff check` and `ruff format --check` clean, as the standards ask, in every run."""
    for args in (["check", "--quiet", "."], ["format", "--check", "--quiet", "."]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
