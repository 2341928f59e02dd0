"""A small class over Streamlit's own websocket protocol (bench/streamlit_client.py).

Six simulated students on one real server, each opening the landing page and typing
sentences of their own, in threads, so their reruns overlap. Every reply must belong to
its own session: the heatmap labels are that student's tokens and nobody else's, with no
exception or error box. The full 100-student run is a benchmark (`python -m bench load`),
not a test: no wall-clock figure is asserted here.
"""

from __future__ import annotations

import threading

import pytest

from bench.streamlit_client import StreamlitTab, Update
from tests.browser.server import serve_app

STUDENTS = 6
EDITS = 3


def _student(url: str, number: int, replies: dict[int, list[tuple[list[str], Update]]]) -> None:
    mine: list[tuple[list[str], Update]] = []
    params = {"text": f"s{number} opens", "tokenizer": "word", "embed_dim": 64, "num_heads": 8}
    with StreamlitTab(url, params) as tab:
        mine.append(([f"s{number}", "opens"], tab.open()))
        for edit in range(EDITS):
            words = [f"s{number}e{edit}w{j}" for j in range(24)]
            mine.append((words, tab.type_text(" ".join(words))))
    replies[number] = mine


@pytest.mark.slow
def test_every_reply_belongs_to_its_own_session() -> None:
    with serve_app("load-protocol") as (url, log):
        replies: dict[int, list[tuple[list[str], Update]]] = {}
        errors: list[BaseException] = []

        def run(number: int) -> None:
            try:
                _student(url, number, replies)
            except BaseException as error:  # reported below, with the student's number
                errors.append(error)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(STUDENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not errors, errors
        assert sorted(replies) == list(range(STUDENTS))
        for number, updates in replies.items():
            assert len(updates) == EDITS + 1
            for words, update in updates:
                assert not update.exceptions and not update.errors, (number, update)
                expected = [f"{i}:{w}" for i, w in enumerate(words)]
                assert update.labels == expected, (number, update.labels[:3], expected[:3])
        log.assert_no_traceback(what="six simulated students")
