"""The view's settings, and the one place where values from a URL are validated.

A teacher shares a link; opening it must reproduce the view exactly, and a broken or
hostile link must fall back to valid values with a visible message, never an error.
`parse_settings` is pure (no streamlit), so every odd query string can be tested.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace

from attention_core.i18n import DEFAULT_LANG, LANGS
from attention_core.limits import MAX_EMBED_DIM, MAX_HEADS, valid_num_heads
from attention_core.reader.card import shipped_shape
from attention_core.tokenize import TOKENIZER_MODES

__all__ = [
    "ATTENTION_KINDS",
    "DEFAULT_TEXT",
    "KEYS",
    "MAX_SEED",
    "MAX_URL_TEXT",
    "TOKENIZERS",
    "WEIGHTS",
    "ModelSettings",
    "Problem",
    "Settings",
    "head_options",
    "nearest_heads",
    "parse_settings",
    "parse_step",
]

DEFAULT_TEXT = "中和有一個永和路"  # the article's example
TOKENIZERS = TOKENIZER_MODES
ATTENTION_KINDS = ("single", "multi")
# untrained: the seeded module the article describes; trained: one layer of the project's
# own reader (attention_core/reader), whose sizes are the checkpoint's
WEIGHTS = ("untrained", "trained")
_MAX_LAYERS = 64  # the range `layer` is checked against when the checkpoint's card is unreadable
MAX_SEED = 2**31 - 1
MAX_URL_TEXT = 2_000  # longer text is kept in the session but not written into the link
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def head_options(embed_dim: int) -> list[int]:
    """The num_heads values offered for `embed_dim`: its divisors up to MAX_HEADS."""
    return [h for h in valid_num_heads(embed_dim) if h <= MAX_HEADS]


def nearest_heads(embed_dim: int, wanted: int) -> int:
    """The offered head count closest to `wanted` (ties go to the smaller)."""
    return min(head_options(embed_dim), key=lambda h: (abs(h - wanted), h))


@dataclass(frozen=True)
class ModelSettings:
    """What determines the attention the app computes: the sentence, how it is cut into
    tokens, and the seeded module. Caches key on this (the interface language is not in it)."""

    text: str = DEFAULT_TEXT
    tokenizer: str = "auto"
    attention: str = "multi"
    embed_dim: int = 16
    num_heads: int = 4
    seed: int = 0
    causal: bool = False
    positional: bool = False
    weights: str = "untrained"
    layer: int | None = None  # trained weights only; None: the checkpoint's clearest layer

    @property
    def trained(self) -> bool:
        return self.weights == "trained"

    @property
    def effective(self) -> ModelSettings:
        """What is computed: with trained weights, the checkpoint's fixed sizes (embed_dim,
        heads; causal, learned positions) and a layer; the untrained sliders stay as they
        were in the sidebar and the link, for when the untrained module is chosen again.
        Unchanged when the checkpoint's card cannot be read (the run then says why)."""
        if not self.trained:
            return self if self.layer is None else replace(self, layer=None)
        shape = shipped_shape()
        if shape is None:
            return self
        layer = self.layer if self.layer is not None and self.layer < shape.num_layers else None
        return replace(
            self,
            attention="multi",
            embed_dim=shape.embed_dim,
            num_heads=shape.num_heads,
            seed=0,
            causal=True,
            positional=True,
            layer=shape.default_layer if layer is None else layer,
        )

    @property
    def heads(self) -> int:
        """Heads actually computed: 1 for single-head attention."""
        return 1 if self.attention == "single" else self.num_heads

    @property
    def model(self) -> ModelSettings:
        """These settings and nothing else (a `Settings` without its interface language)."""
        return ModelSettings(**{f.name: getattr(self, f.name) for f in fields(ModelSettings)})


@dataclass(frozen=True)
class Settings(ModelSettings):
    """A view as the URL holds it: the model's settings and the interface language."""

    lang: str = DEFAULT_LANG

    def to_query_params(self) -> dict[str, str]:
        """The URL form; text too long for a link is left out (see MAX_URL_TEXT)."""
        params = {
            k: (str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in asdict(self).items()
            if v is not None
        }
        if not self.trained:  # links to the untrained module look as they always did
            params.pop("weights", None)
            params.pop("layer", None)
        if len(self.text) > MAX_URL_TEXT:
            del params["text"]
        return params


KEYS = tuple(f.name for f in fields(Settings))


@dataclass(frozen=True)
class Problem:
    """One URL value that could not be used: shown to the user, then replaced."""

    key: str
    value: str  # the offending value, shortened for display
    fallback: str
    reason: str  # an i18n key: why the value was rejected
    params: dict[str, object] = field(default_factory=dict)


def _shorten(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _last(value: str | Sequence[str]) -> str:
    """A repeated parameter (?seed=1&seed=2) counts as its last value, as in a browser form."""
    if isinstance(value, str):
        return value
    return str(value[-1]) if len(value) else ""


def _parse_int(raw: str, lo: int, hi: int) -> int | None:
    s = raw.strip()
    if not re.fullmatch(r"[+-]?\d{1,12}", s):
        return None
    value = int(s)
    return value if lo <= value <= hi else None


def _parse_bool(raw: str) -> bool | None:
    s = raw.strip().lower()
    return True if s in _TRUE else False if s in _FALSE else None


def parse_settings(
    params: Mapping[str, str | Sequence[str]], *, base: Settings | None = None
) -> tuple[Settings, list[Problem]]:
    """Settings from URL query parameters, each validated; missing keys keep `base`.

    Never raises: an invalid value falls back to the base value and adds a Problem.
    """
    s = base or Settings()
    values = asdict(s)
    problems: list[Problem] = []

    def reject(key: str, raw: str, reason: str, **extra: object) -> None:
        fallback = values[key]
        if key == "layer" and fallback is None:  # the checkpoint's own starting layer
            shape = shipped_shape()
            fallback = shape.default_layer if shape is not None else 0
        problems.append(Problem(key, _shorten(raw), str(fallback), reason, dict(extra)))

    get = {k: _last(v) for k, v in params.items() if k in KEYS}
    if "text" in get:
        values["text"] = get["text"].replace("\x00", "")
    for key, choices in (
        ("tokenizer", TOKENIZERS),
        ("attention", ATTENTION_KINDS),
        ("lang", LANGS),
        ("weights", WEIGHTS),
    ):
        if key in get:
            if get[key] in choices:
                values[key] = get[key]
            else:
                reject(key, get[key], "reason_choice", choices=", ".join(choices))
    for key, lo, hi in (("embed_dim", 1, MAX_EMBED_DIM), ("seed", 0, MAX_SEED)):
        if key in get:
            number = _parse_int(get[key], lo, hi)
            if number is None:
                reject(key, get[key], "reason_range", lo=lo, hi=hi)
            else:
                values[key] = number
    if "layer" in get:
        shape = shipped_shape()
        layers = shape.num_layers if shape is not None else _MAX_LAYERS
        number = _parse_int(get["layer"], 0, layers - 1)
        if number is None:
            reject("layer", get["layer"], "reason_range", lo=0, hi=layers - 1)
        else:
            values["layer"] = number
    for key in ("causal", "positional"):
        if key in get:
            flag = _parse_bool(get[key])
            if flag is None:
                reject(key, get[key], "reason_bool")
            else:
                values[key] = flag
    # num_heads last: what is valid depends on the embed_dim chosen above
    dim = values["embed_dim"]
    if values["num_heads"] not in head_options(dim):
        values["num_heads"] = nearest_heads(dim, values["num_heads"])
    if "num_heads" in get:
        heads = _parse_int(get["num_heads"], 1, MAX_HEADS)
        if heads is not None and dim % heads == 0:
            values["num_heads"] = heads
        else:
            wanted = heads if heads is not None else values["num_heads"]
            values["num_heads"] = nearest_heads(dim, wanted)
            reject(
                "num_heads",
                get["num_heads"],
                "reason_heads",
                embed_dim=dim,
                valid=", ".join(map(str, head_options(dim))),
            )
    return replace(s, **values), problems


def parse_step(raw: str | None, count: int) -> int | None:
    """The 1-based step a URL value names (`?step=3`), or None unless it is one of 1…count."""
    if raw is None or not re.fullmatch(r"\s*\d{1,4}\s*", raw, flags=re.ASCII):
        return None
    step = int(raw)
    return step if 1 <= step <= count else None
