"""Attention Studio's benchmarks: `python -m bench` runs them all and prints markdown tables.

Sections (each also alone: `python -m bench core server`): core (attention module vs
torch.nn.MultiheadAttention, tokenizer throughput), server (script time per rerun),
payload (chart bytes per view), browser (real Chromium: page load, typing, painting),
bertviz (BertViz's head view vs this app), pretrained (MiniLM load and forward), train
(bench/section_train.py). See bench/README.md.
"""
