"""The attention file a session opened (pages/attention_file.py), shared with the Compare
page: read once per upload, kept in the session until another file is opened or closed.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from attention_core.attention_file import AttentionFileError, read_attention
from attention_core.limits import MAX_TOKENS

FILE_STATE = "file_attention"  # {"id", "name", "weights" (L, H, n, n), "tokens" (n)}
_REFUSED = "_file_refused"  # (upload id, AttentionFileError): a refused file is read once


def open_upload(upload: Any) -> None:
    """Read `upload` (st.file_uploader's file) into the session, once per upload.

    Raises AttentionFileError (with its `code` and `params`) when the file cannot be shown;
    the file opened before stays open."""
    state = st.session_state
    opened = state.get(FILE_STATE)
    if opened is not None and opened["id"] == upload.file_id:
        return
    refused = state.get(_REFUSED)
    if refused is not None and refused[0] == upload.file_id:
        raise refused[1]
    try:
        attention = read_attention(upload.getvalue(), upload.name)
        n = len(attention.tokens)
        if n > MAX_TOKENS:  # the views' bound (exact heatmaps, head view), as for any text
            raise AttentionFileError(
                f"{n} tokens: the views show at most {MAX_TOKENS}",
                code="too_long",
                n=n,
                limit=MAX_TOKENS,
            )
    except AttentionFileError as error:
        state[_REFUSED] = (upload.file_id, error)
        raise
    state[FILE_STATE] = {
        "id": upload.file_id,
        "name": upload.name,
        "weights": attention.weights,  # (L, H, n, n) float32, rows summing to 1
        "tokens": attention.tokens,
    }


def close_file() -> None:
    """Forget the opened file (the Close button): its memory goes with it."""
    st.session_state.pop(FILE_STATE, None)
    st.session_state.pop(_REFUSED, None)
