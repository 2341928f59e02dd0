"""A browser tab as the server sees it: Streamlit's own websocket protocol, no browser.

A load test that drives 100 Chromium tabs on a 2-core machine measures Chromium. This
client speaks what a tab speaks to `streamlit run`: it opens `/_stcore/stream` with the
`streamlit` subprotocol, sends a `BackMsg.rerun_script` (the query string, the page, the
widget states) and reads `ForwardMsg`s until `script_finished`. The messages are the
protobufs that ship in the streamlit package. What it measures is the server: from sending
a change to the script run that answers it being finished.

    with StreamlitTab("http://127.0.0.1:8501", {"text": "中和有一個永和路"}) as tab:
        first = tab.open()                        # the page load
        update = tab.type_text("the cat sat")     # the sidebar's sentence box changed
        update.seconds, update.labels             # how long, and the tokens drawn

Used by `bench/section_load.py` (Locust, 100 simulated students) and the default suite's
`tests/project/test_load_protocol.py` (a few students: every reply belongs to its own session).
"""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.sync.client import ClientConnection, connect

__all__ = ["StreamlitTab", "Update"]

CHART = "attention_studio_chart"  # ui.charts.CHART_COMPONENT: the app's chart component

_DONE = {
    ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY,
    ForwardMsg.ScriptFinishedStatus.FINISHED_WITH_COMPILE_ERROR,
}


@dataclass
class Update:
    """What one change brought back: time to the end of the run, bytes, and what was drawn."""

    seconds: float
    bytes: int
    charts: list[dict[str, Any]] = field(default_factory=list)  # Plotly figures drawn
    markdown: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)  # st.exception boxes (tracebacks)
    errors: list[str] = field(default_factory=list)  # st.error boxes

    @property
    def labels(self) -> list[str]:
        """The x labels of the first heatmap of the first chart (the tokens drawn)."""
        for chart in self.charts:
            for trace in chart.get("data", []):
                if trace.get("type") == "heatmap" and isinstance(trace.get("x"), list):
                    return [str(x) for x in trace["x"]]
        return []


class StreamlitTab:
    """One session of the app, driven like a browser tab (see the module docstring)."""

    finished = _DONE  # the script_finished statuses that end a run's reply

    def __init__(
        self,
        base_url: str,
        params: dict[str, object] | None = None,
        *,
        timeout: float = 120.0,
        connect_timeout: float | None = None,
    ) -> None:
        """`timeout`: for a run's reply; `connect_timeout`: for the websocket's opening
        handshake (default: `timeout`)."""
        self.url = base_url.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
        self.query = urlencode({k: str(v) for k, v in (params or {}).items()})
        self.timeout = timeout
        self.connect_timeout = timeout if connect_timeout is None else connect_timeout
        self.page_hash = ""
        self.widget_ids: dict[str, str] = {}  # widget kind + label → element id
        self._ws: ClientConnection | None = None
        self._stack = ExitStack()

    def __enter__(self) -> StreamlitTab:
        self._ws = self._stack.enter_context(
            connect(
                self.url,
                subprotocols=["streamlit"],  # type: ignore[list-item]
                max_size=None,
                open_timeout=self.connect_timeout,
                origin="http://127.0.0.1",  # type: ignore[arg-type]
            )
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()
        self._ws = None

    def open(self) -> Update:
        """The page load: a rerun with the URL's query string and no widget states."""
        return self.rerun([])

    def type_text(self, text: str) -> Update:
        """The sidebar's sentence box now holds `text` (what Ctrl+Enter sends)."""
        state = WidgetState(id=self.widget_ids["text_area"], string_value=text)
        return self.rerun([state])

    def rerun(self, widget_states: list[WidgetState]) -> Update:
        """Send one rerun request and read until its script run has finished."""
        if self._ws is None:
            raise RuntimeError("use the tab in a `with` block")
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.widget_states.widgets.extend(widget_states)
        started = time.perf_counter()
        self._ws.send(msg.SerializeToString())
        return self._read(started)

    def _read(self, started: float) -> Update:
        assert self._ws is not None
        update = Update(seconds=0.0, bytes=0)
        deadline = started + self.timeout
        while True:
            raw = self._ws.recv(timeout=max(0.1, deadline - time.perf_counter()))
            assert isinstance(raw, bytes)
            update.bytes += len(raw)
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "new_session" and fm.new_session.page_script_hash:
                self.page_hash = fm.new_session.page_script_hash
            elif kind == "page_info_changed":
                self.query = fm.page_info_changed.query_string  # the app wrote the URL
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                self._element(fm.delta.new_element, update)
            elif kind == "script_finished" and fm.script_finished in self.finished:
                update.seconds = time.perf_counter() - started
                return update
            else:
                self._message(kind, fm)

    def _message(self, kind: str | None, fm: ForwardMsg) -> None:
        """Any other message of a run (a subclass may read more of them)."""

    def _element(self, element: Any, update: Update) -> None:
        kind = element.WhichOneof("type")
        if kind == "text_area":
            self.widget_ids["text_area"] = element.text_area.id
        elif kind == "plotly_chart":
            update.charts.append(json.loads(element.plotly_chart.spec))
        elif kind == "bidi_component" and element.bidi_component.component_name == CHART:
            (data,) = json.loads(element.bidi_component.json)  # ui/charts.py sends [payload]
            update.charts.append(json.loads(data["figure"]))
        elif kind == "markdown":
            update.markdown.append(element.markdown.body)
        elif kind == "exception":
            update.exceptions.append(f"{element.exception.type}: {element.exception.message}")
        elif kind == "alert" and element.alert.format == element.alert.ERROR:
            update.errors.append(element.alert.body)
