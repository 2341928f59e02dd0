"""The app's shared UI code: what the pages in pages/ import (not pages themselves).

    language    the interface language (lang, tr); a leaf module
    web         ASGI types, the base path, plotly.js's route; a leaf module
    common      settings, option widgets that keep their values, safe text
    cache       the short views' Streamlit caches, keyed on plain values (the atlas's:
                cache_atlas; long texts': long/cache)
    charts      every chart, drawn with one config (figure_json: Plotly JSON)
    scale_notes what a heatmap's colours mean under the chosen colour scale
    models      the pretrained model, loaded and run, or a clear message
    headview    the BertViz-style head view
    finished_runs  this session's finished training runs, for the lessons
    reader_switch  the trained reader on the pages (the one-click switch)
    train_*     the Train page's parts (settings, run, playback, detector, tables, figures)
    presenter   presenter mode, phone CSS, arrow keys, QR codes, share links
    address     the address a phone can open (LAN, public URL) or a warning with the fix
    classroom   the class poll's Streamlit side
    slots       how many script runs compute at once
    server      what `streamlit run app.py` serves besides the script
    long/       the views of texts past 512 tokens (ui.long's docstring)

Nothing here computes attention: that is attention_core's job.
"""
