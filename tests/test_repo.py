"""The project's promises about itself: the CI runs README's test command, torch is
pinned, and the library stays free of streamlit."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
