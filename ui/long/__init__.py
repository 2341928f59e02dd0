"""The long-prompt views (texts past MAX_TOKENS = 512 tokens, up to MAX_LONG_TOKENS): what
the pages show when `attention_core.long` keeps attention as maps instead of weights.

    view      the long map on the landing and Pretrained pages: find, sentence and
              paragraph aggregates, which bound cut the text
    cache     the long views' caches, keyed by a source: ("module", settings) or
              ("pretrained", model, text); one LongSubject whichever read it
    chart     the long map's element (chart.js, chart_colours.js, chart_axes.js): one
              Plotly heatmap per head from pooled tiles, zoom and pan fetch finer ones
    tiles     GET /_studio/tile: tiles of published maps over HTTP (ASGI middleware)
    stats     "What each head does" of a long map
    lens      the Lens page past 512 tokens
    compare   the Compare page past 512 tokens
    pairs     Minimal pairs of two long prompts

Importing these loads no torch: each computes through `attention_core.long` when the
first long text arrives. Modules are imported by name (`from ui.long.view import ...`).
"""
