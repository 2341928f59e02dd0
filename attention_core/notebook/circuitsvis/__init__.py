"""CircuitsVis's attention calls on the project's offline views: one changed import.

    import circuitsvis as cv                                   # was
    from attention_core.notebook import circuitsvis as cv      # now: nothing from unpkg
    cv.attention.attention_patterns(tokens=str_tokens, attention=cache["pattern", 0][0])
    cv.attention.attention_heads(attention=cache["pattern", 0][0], tokens=str_tokens)

CircuitsVis loads its React bundle from unpkg when the cell displays; these draw with the
project's own views (every script inline) and return a widget in a live kernel, as the
views do (`widget=`). https://github.com/TransformerLensOrg/CircuitsVis
"""

from __future__ import annotations

from attention_core.notebook.circuitsvis import attention
from attention_core.notebook.circuitsvis.attention import (
    attention_heads,
    attention_pattern,
    attention_patterns,
)

__all__ = ["attention", "attention_heads", "attention_pattern", "attention_patterns"]
