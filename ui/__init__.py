"""The app's shared UI code: what the pages in pages/ import (not pages themselves).

    common   language, settings, option widgets that keep their values, safe text
    cache    every Streamlit cache, keyed on plain values
    charts   every chart, drawn with one config
    models   the pretrained model, loaded and run, or a clear message

Nothing here computes attention: that is attention_core's job.
"""
