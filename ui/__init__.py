"""The app's shared UI code: what the pages in pages/ import (not pages themselves).

    common      language, settings, option widgets that keep their values, safe text
    cache       every Streamlit cache, keyed on plain values
    charts      every chart, drawn with one config (figure_json: Plotly JSON)
    scale_notes what a heatmap's colours mean under the chosen colour scale
    models      the pretrained model, loaded and run, or a clear message
    headview    the BertViz-style head view
    trained     this session's finished training runs, for the lessons
    train_*     the Train page's parts (settings, run, playback, detector, tables, figures)
    presenter   presenter mode, phone CSS, arrow keys, QR codes, share links
    address     the address a phone can open (LAN, public URL) or a warning with the fix
    classroom   the class poll's Streamlit side
    slots       how many script runs compute at once

Nothing here computes attention: that is attention_core's job.
"""
