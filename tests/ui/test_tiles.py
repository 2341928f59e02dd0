"""ui/long/tiles.py: a long map's tiles over HTTP, driven through the app's own middleware stack
with starlette's TestClient (a stub stands for Streamlit behind it)."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from attention_core.limits import EXACT, MAX_TILE_SIZE
from attention_core.long.map import AttentionMap
from attention_core.long.store import MapStore
from ui.long import tiles
from ui.server import MIDDLEWARE

N, H = 300, 2


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> TestClient:
    own = MapStore()  # a store of this test
    monkeypatch.setattr(tiles, "store", lambda: own)
    app = Starlette(
        routes=[Route("/{path:path}", lambda _r: PlainTextResponse("streamlit", 299))],
        middleware=MIDDLEWARE,
    )
    return TestClient(app)


@pytest.fixture
def layer() -> AttentionMap:
    gen = np.random.default_rng(0)
    q, k = gen.normal(size=(2, H, N, 8)).astype(np.float32)
    return AttentionMap.from_qk(q, k, causal=True)


def _values(body: dict) -> np.ndarray:
    raw = np.frombuffer(base64.b64decode(body["values"]), dtype="<f4")
    return raw.reshape(body["shape"])  # (R, C)


def test_a_zoomed_rectangle_is_exact_and_equal_to_the_map(client, layer) -> None:
    map_id = tiles.publish([layer])
    assert len(map_id) >= 20 and map_id != tiles.publish([layer])  # unguessable, fresh
    r = client.get(
        tiles.TILE_PATH,
        params={"map": map_id, "head": 1, "r0": 100, "r1": 140, "c0": 90, "c1": 150, "size": 64},
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["exact"] and body["rows"] == list(range(100, 141))
    want = layer.exact(1, slice(100, 140), slice(90, 150))
    np.testing.assert_allclose(_values(body), want, atol=EXACT, rtol=0)


def test_the_whole_map_pooled_keeps_every_row(client, layer) -> None:
    map_id = tiles.publish([layer])
    params = {"map": map_id, "head": 0, "r0": 0, "r1": N, "c0": 0, "c1": N, "size": 32}
    body = client.get(tiles.TILE_PATH, params={**params, "reduce": "mass"}).json()
    assert not body["exact"] and body["block"] == 10 and body["rows"][-1] == N
    np.testing.assert_allclose(_values(body).sum(axis=1), 1, atol=1e-5)  # mass: rows sum to 1


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({"map": "x" * 24}, 404),  # never published (or evicted)
        ({"map": "../etc"}, 400),
        ({"head": "2"}, 404),  # out of range
        ({"layer": "1"}, 404),
        ({"r0": str(N)}, 404),  # starts after the map
        ({"r1": "5", "r0": "9"}, 404),  # empty
        ({"c0": "-1"}, 400),
        ({"c1": "1e3"}, 400),
        ({"size": "0"}, 400),
        ({"size": str(MAX_TILE_SIZE + 1)}, 400),
        ({"reduce": "sum"}, 400),
        ({"head": ""}, 400),
        ({"r0": "9" * 40}, 400),
    ],
)
def test_bad_requests_get_small_json_never_a_traceback(client, layer, change, status) -> None:
    map_id = tiles.publish([layer])
    params = {"map": map_id, "head": 0, "r0": 0, "r1": 10, "c0": 0, "c1": 10, **change}
    r = client.get(tiles.TILE_PATH, params=params)
    assert r.status_code == status and set(r.json()) == {"error"}
    assert len(r.content) < 200 and "Traceback" not in r.text


def test_an_evicted_map_is_gone_and_other_paths_reach_streamlit(client, layer) -> None:
    first = tiles.publish([layer])
    small = MapStore(max_bytes=layer.nbytes)  # room for one map
    tiles.store = lambda: small  # (the fixture's monkeypatch restores it)
    kept, second = tiles.publish([layer], first), tiles.publish([layer])
    assert kept == first and first not in small and second in small
    params = {"map": first, "head": 0, "r0": 0, "r1": 4, "c0": 0, "c1": 4}
    assert client.get(tiles.TILE_PATH, params=params).json() == {"error": "gone"}
    assert client.post(tiles.TILE_PATH).status_code == 405
    assert client.get("/_studio/tiles").text == "streamlit"
