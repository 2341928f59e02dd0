"""What the colours of a heatmap mean, said once for every page that draws weights.

The colour bar's title names the scale (`ui.common.colour_bar_title`); the caption here
says what its colours mean for the n tokens shown, so a caption never claims "0 to 1"
while the colours are relative to an even share.
"""

from __future__ import annotations

from attention_core.figures.scales import RELATIVE_MAX
from ui.language import tr

__all__ = ["long_scale_caption", "scale_caption"]


def scale_caption(scale: str, n: int, *, one_axis: bool = False) -> str:
    """The caption of colour scale `scale` (`colour_scale_choice`) for n tokens. `one_axis`:
    one colour axis for all panels (the model view), whose contrast runs to the largest
    weight shown rather than each head's own."""
    key = f"scale_caption_{scale}"
    if one_axis and scale == "contrast":
        key = "scale_caption_contrast_all"
    n = max(n, 1)
    return tr(key, n=n, uniform=1 / n, top=RELATIVE_MAX / n)


def long_scale_caption(scale: str, n: int, *, causal: bool) -> str:
    """The long map's caption of colour scale `scale` for n tokens: what its colours mean for
    exact and for pooled cells (attention_core.long.scale); `causal`: rows' even shares are
    1/(i + 1)."""
    n = max(n, 1)
    key = f"long_scale_caption_{scale}" + ("_causal" if causal and scale == "relative" else "")
    return tr(key, n=n, last=n - 1, uniform=1 / n)
