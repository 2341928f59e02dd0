"""decode_view and attribution_view as widgets in a real kernel (nbclient on an ipykernel):
the default there is the widget; state set from Python sends what it should (a step's rows,
nothing more), state sent as a frontend sends it (a `comm_msg` update on the shell
channel) reaches Python; the numbers are the reader's own forward and the static page's.

Skips locally without nbclient, ipykernel or anywidget; fails under CI.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from attention_core.limits import EXACT
from attention_core.notebook import attribution_view, decode_view
from attention_core.reader import load_shipped
from tests.support.availability import unavailable

ROOT = Path(__file__).resolve().parents[3]
PROMPT = "今天天氣很好，我們"
TEXT = "永和<b>路</b>"
STEPS = 4
KERNEL_TIMEOUT_S = 240

SETUP = f"""
import json
from attention_core.notebook import attribution_view, decode_view
from attention_core.reader import load_shipped
dec = decode_view("reader", {PROMPT!r}, steps={STEPS})
att = attribution_view(load_shipped(), {TEXT!r}, steps=4)
sent = []
_send = dec.comm.send
def spy(data=None, metadata=None, buffers=None, **kw):
    data = data or {{}}
    names = [*data.get("state", {{}}), *(path[0] for path in data.get("buffer_paths", []))]
    sent.append({{"state": sorted(names), "bytes": sum(len(b) for b in buffers or [])}})
    return _send(data=data, metadata=metadata, buffers=buffers, **kw)
dec.comm.send = spy
display(dec, att)
"""
PYTHON_SIDE = """
dec.step = 2
dec.layer = 1
print("OUT", json.dumps({"sent": sent, "rows": list(memoryview(dec.rows).cast("f")),
                         "type": type(dec).__name__, "layer": dec.layer}))
"""
READ_BACK = """
print("OUT", json.dumps({
    "dec": [dec.selected, dec.heads, dec.step],
    "att": [att.method, att.layer, att.head, att.selected],
    "attention": att.attention.tolist(), "type": type(att).__name__,
}))
"""


def _printed(cell: Any) -> dict:
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    assert not errors, errors
    return json.loads(text.split("OUT", 1)[1])


def _update(client: Any, model_id: str, state: dict) -> None:
    """What a frontend sends when the user changes the view: a comm_msg update."""
    kc = client.kc
    content = {"comm_id": model_id, "data": {"method": "update", "state": state}}
    kc.shell_channel.send(kc.session.msg("comm_msg", content))


@pytest.fixture(scope="module")
def kernel_run() -> dict:
    """The cells run in one kernel: the display data and what each cell printed."""
    try:
        import anywidget  # noqa: F401
        import ipykernel  # noqa: F401
        import nbformat
        from nbclient import NotebookClient
    except ImportError as error:
        unavailable(f"no kernel to run the widgets in: {error} (requirements-dev.txt)")
    cells = [nbformat.v4.new_code_cell(c) for c in (SETUP, PYTHON_SIDE, READ_BACK)]
    notebook = nbformat.v4.new_notebook(cells=cells)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        mp.setenv("HF_HUB_OFFLINE", "1")
        client = NotebookClient(notebook, timeout=KERNEL_TIMEOUT_S, kernel_name="python3")
        with client.setup_kernel():
            client.execute_cell(cells[0], 0)
            shown = [o["data"] for o in cells[0].outputs if o.get("output_type") == "display_data"]
            ids = [d["application/vnd.jupyter.widget-view+json"]["model_id"] for d in shown]
            client.execute_cell(cells[1], 1)
            _update(client, ids[0], {"selected": 3, "heads": [2, 0]})
            _update(client, ids[1], {"method": "occlusion", "layer": 1, "head": 2, "selected": 4})
            time.sleep(0.5)  # the shell channel is served in order: the updates come first
            client.execute_cell(cells[2], 2)
    return {"shown": shown, "python": _printed(cells[1]), "frontend": _printed(cells[2])}


def test_in_a_kernel_both_views_are_widgets_with_their_static_page(kernel_run: dict) -> None:
    dec_data, att_data = kernel_run["shown"]
    for data in (dec_data, att_data):
        assert "application/vnd.jupyter.widget-view+json" in data
    assert kernel_run["python"]["type"] == "DecodeWidget"
    assert kernel_run["frontend"]["type"] == "AttributionWidget"
    # the static pages, unchanged, for frontends without widgets
    assert dec_data["text/html"] == decode_view("reader", PROMPT, steps=STEPS, widget=False).data
    static = attribution_view(load_shipped(), TEXT, steps=4, widget=False)
    assert att_data["text/html"] == static.data


def test_a_step_set_in_python_sends_that_steps_rows_only(kernel_run: dict) -> None:
    out = kernel_run["python"]
    view = decode_view("reader", PROMPT, steps=STEPS, widget=False)
    L, H, t = view.attention[2].shape  # (L, H, t), t = prompt + 2
    # the reader's own forward on the prefix that chose step 2's token is the reference
    ids = view.result.ids[: view.result.prompt_length + 2]
    with torch.no_grad():
        _, weights = load_shipped().model(torch.tensor([ids]))
    own = torch.stack([w[0, :, -1] for w in weights]).numpy()  # (L, H, t)
    rows = np.array(out["rows"], dtype=np.float32).reshape(L, H, t)
    assert np.abs(rows - own).max() <= EXACT
    # the step change: its number, then its rows (L·H·t float32); the layer: its number only
    with_bytes = [m for m in out["sent"] if m["bytes"]]
    assert with_bytes == [{"state": ["rows"], "bytes": L * H * t * 4}]
    assert {"state": ["layer"], "bytes": 0} in out["sent"] and out["layer"] == 1


def test_state_sent_by_a_frontend_reaches_python(kernel_run: dict) -> None:
    out = kernel_run["frontend"]
    assert out["dec"] == [3, [0, 2], 2]  # selected, heads (checked, sorted), step kept
    assert out["att"] == ["occlusion", 1, 2, 4]
    result = attribution_view(load_shipped(), TEXT, steps=4, widget=False).result
    np.testing.assert_allclose(out["attention"], result.views.raw[1, 2], rtol=0, atol=EXACT)
