"""Train the reader on the project's corpus, measure it against n-gram baselines, ship it.

    python -m attention_core.reader.fit [--corpus DIR] [--out DIR] [--steps N] [--seed S]

reads DIR/train.txt and DIR/heldout.txt (`python -m attention_core.train.corpus build`
makes them; DIR defaults to that command's folder), builds the vocabulary from the train
split, trains `ReaderLM` (next unit, and whether the next unit starts a jieba word: see
`train`; AdamW, cosine schedule, fixed seed), then measures on
the held-out split, for the model and for two baselines fitted on the same train split:

- unigram: add-one counts over the vocabulary;
- bigram: Jelinek-Mercer interpolation with the unigram, λ the best of a grid *on the
  held-out split itself* (an optimistic baseline: the model gets no such help).

Figures: bits per Chinese character (targets that are CJK characters), bits per English
word, bits per unit over everything. Writes OUT/reader.safetensors, OUT/vocab.json and
OUT/card.json (config, steps, seed, the figures, both files' SHA-256), which
`attention_core.reader.weights.load` checks before it trusts the weights.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from attention_core.reader.measure import FAR, describe, heldout_heads, same_word
from attention_core.reader.model import ReaderConfig, ReaderLM
from attention_core.reader.vocab import Vocab
from attention_core.reader.weights import SHIPPED_DIR, save
from attention_core.train.corpus import EVERYDAY, HAN
from attention_core.train.everyday import EverydaySentence, read_everyday

__all__ = [
    "baselines",
    "encode_lines",
    "evaluate",
    "everyday",
    "train",
    "unit_kinds",
    "word_starts",
]

LOG2 = math.log(2)
BOUNDARY_WEIGHT = 1.0  # the second target's weight (see `train`); 0: next unit only
WORD_HEAD, WORD_WEIGHT = "1.0", 0.3  # the head taught its word, and that loss's weight
# the shipped files' run: 2 000 steps (a longer run reads better but its word heads blur:
# 3 000 steps at weight 2 ended at 1.29x same-word), on one thread because float sums in
# another order land elsewhere, so `fit` with no options rebuilds the same files
STEPS = 2000
THREADS = 1


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text("utf-8").splitlines() if line.strip()]


def encode_lines(lines: Sequence[str], vocab: Vocab) -> np.ndarray:
    """One stream of ids: each line as [BOS] + its units."""
    ids: list[int] = []
    for line in lines:
        ids.extend(vocab.encode(line).ids)
    return np.asarray(ids, dtype=np.int64)


def word_starts(lines: Sequence[str], vocab: Vocab) -> np.ndarray:
    """Aligned with `encode_lines(lines, vocab)`: 1 where a unit starts a jieba word (the
    segmentation every word-pooled view uses: `attention_core.reader.words`), 0 where it
    continues one, -1 at each line's [BOS] (nothing to predict there)."""
    from attention_core.reader.words import word_lengths

    out: list[int] = []
    for line in lines:
        encoded = vocab.encode(line)
        out.append(-1)
        for size in word_lengths(line, encoded.units):
            out.extend([1] + [0] * (size - 1))
    return np.asarray(out, dtype=np.int8)


def _is_cjk(token: str) -> bool:
    """One Han character, as the corpus counts them (`attention_core.train.corpus.HAN`)."""
    return len(token) == 1 and bool(HAN.fullmatch(token))


def unit_kinds(vocab: Vocab) -> np.ndarray:
    """Per id: 1 a CJK character, 2 an English word, 0 anything else."""
    kinds = np.zeros(len(vocab), dtype=np.int8)
    for i, token in enumerate(vocab.tokens[2:], start=2):
        kinds[i] = 1 if _is_cjk(token) else 2 if token.isascii() and token.isalpha() else 0
    return kinds


def _summary(bits: np.ndarray, targets: np.ndarray, kinds: np.ndarray) -> dict[str, float]:
    kind = kinds[targets]

    def mean(of: np.ndarray) -> float:
        return float(of.mean()) if of.size else float("nan")

    return {
        "bits_per_cjk_char": mean(bits[kind == 1]),
        "bits_per_english_word": mean(bits[kind == 2]),
        "bits_per_unit": float(bits.mean()),
        "targets": int(bits.size),
    }


def baselines(train_ids: np.ndarray, heldout_ids: np.ndarray, kinds: np.ndarray) -> dict:
    """Unigram and bigram figures on the held-out stream (see the module docstring)."""
    V = len(kinds)
    unigram = (np.bincount(train_ids, minlength=V) + 1.0) / (train_ids.size + V)
    prev, nxt = heldout_ids[:-1], heldout_ids[1:]
    uni_bits = -np.log2(unigram[nxt])
    pair = train_ids[:-1] * V + train_ids[1:]
    keys, counts = np.unique(pair, return_counts=True)
    context_counts = np.bincount(train_ids[:-1], minlength=V).astype(np.float64)
    where = np.searchsorted(keys, prev * V + nxt)
    found = (where < keys.size) & (keys[np.minimum(where, keys.size - 1)] == prev * V + nxt)
    pair_counts = np.where(found, counts[np.minimum(where, keys.size - 1)], 0)
    ml = np.divide(
        pair_counts, context_counts[prev], out=np.zeros(prev.size), where=context_counts[prev] > 0
    )
    best = None
    for lam in np.linspace(0.05, 0.95, 19):
        bits = -np.log2(lam * ml + (1 - lam) * unigram[nxt])
        if best is None or bits.mean() < best[1].mean():
            best = (float(lam), bits)
    assert best is not None
    return {
        "unigram": _summary(uni_bits, nxt, kinds),
        "bigram": {**_summary(best[1], nxt, kinds), "lambda": round(best[0], 2)},
    }


@torch.no_grad()
def evaluate(model: ReaderLM, ids: np.ndarray, kinds: np.ndarray, batch: int = 32) -> dict:
    """The model's figures on a stream: windows of `context` units, each unit predicting
    the next (the first unit of a window has no past). Every unit after the stream's first
    is a target once, as for the baselines: whole windows go in batches, the stream's last,
    shorter window on its own."""
    model.eval()
    n = model.config.context
    starts = list(range(0, ids.size - 1, n))
    whole = [s for s in starts if s + n < ids.size]  # windows of n inputs and n targets
    groups = [whole[i : i + batch] for i in range(0, len(whole), batch)]
    if len(whole) < len(starts):
        groups.append(starts[len(whole) :])  # the last window, shorter
    all_bits, all_targets = [], []
    for group in groups:
        chunk = [ids[s : s + n + 1] for s in group]  # each of one length within a group
        x = torch.from_numpy(np.stack([c[:-1] for c in chunk]))  # (B, w)
        y = torch.from_numpy(np.stack([c[1:] for c in chunk]))  # (B, w) the next units
        logits, _ = model(x)  # (B, w, V)
        logp = torch.log_softmax(logits, -1).gather(-1, y.unsqueeze(-1)).squeeze(-1)
        all_bits.append((-logp / LOG2).flatten().numpy())
        all_targets.append(y.flatten().numpy())
    return _summary(np.concatenate(all_bits), np.concatenate(all_targets), kinds)


EVERYDAY_STRIDE = 4  # every 4th everyday sentence (all six levels) for the head figures


def everyday(
    model: ReaderLM,
    vocab: Vocab,
    sentences: Sequence[EverydaySentence],
    train_ids: np.ndarray,
    kinds: np.ndarray,
) -> dict:
    """The card's figures on the everyday held-out set: on every `EVERYDAY_STRIDE`-th
    sentence (about 1 100 of the 4 349, every level) same-word with jieba's words and with
    the human segmentation, and each head's pattern masses (previous character, far back,
    …); on all of them, bits per character against the unigram and bigram baselines."""
    texts = [s.text for s in sentences]
    sample = sentences[::EVERYDAY_STRIDE]
    ids = encode_lines(texts, vocab)
    gold = ((s.text, s.gold_lengths) for s in sample if s.gold_lengths)
    return {
        "sentences": len(texts),
        "stride": EVERYDAY_STRIDE,
        "same_word": same_word(
            model, vocab, ((s.text, None) for s in sample), min_cjk=4, limit=len(sample)
        ),
        "same_word_gold": same_word(model, vocab, gold, min_cjk=4, limit=len(sample)),
        "heads": heldout_heads(model, vocab, [s.text for s in sample], limit=len(sample)),
        "far": FAR,
        "bits": {"model": evaluate(model, ids, kinds), **baselines(train_ids, ids, kinds)},
    }


def word_targets(starts: np.ndarray) -> np.ndarray:
    """(B, n) word starts of windows (`word_starts`: 1 starts a word, 0 continues one, -1 a
    line's [BOS]) → (B, n, n) each row's target keys: the earlier units of its own word, or
    the row's own unit when it starts a word (or is a [BOS]). A window's first unit starts
    a word of its own (what came before it is not in the window)."""
    n = starts.shape[1]
    boundary = starts != 0  # (B, n): a [BOS] also ends the word before it
    boundary[:, 0] = True
    word = np.cumsum(boundary, axis=1)  # (B, n) a word number per unit
    earlier = np.tril(np.ones((n, n), dtype=bool), -1)  # (n, n) key before query
    same = (word[:, :, None] == word[:, None, :]) & earlier  # (B, n, n)
    alone = ~same.any(-1)  # (B, n) rows with no earlier unit of their word
    same[:, np.arange(n), np.arange(n)] |= alone
    return same


def train(
    train_ids: np.ndarray,
    config: ReaderConfig,
    *,
    steps: int,
    seed: int = 0,
    batch: int = 32,
    lr: float = 3e-3,
    log_every: int = 50,
    starts: np.ndarray | None = None,
    boundary_weight: float = 0.0,
    word_head: tuple[int, int] | None = None,
    word_weight: float = 0.0,
    out=sys.stdout,
) -> ReaderLM:
    """AdamW on random windows of the stream; warm-up 5 %, cosine decay to 10 % of `lr`.

    With `starts` (`word_starts`, aligned with `train_ids`) and `boundary_weight` > 0 the
    loss adds that weight × a second next-unit target: does the next unit start a new
    word? (binary cross-entropy of one linear read-out of the final hidden state, which is
    dropped after training: the shipped model is `ReaderLM` alone). No head is told where
    to look; whatever attention answers that question is learned.

    With `word_head` (layer, head) and `word_weight` > 0 (and `starts`), that one head is
    also taught where to look, as LISA teaches a head syntax (Strubell et al. 2018): the
    loss adds that weight × the cross-entropy of the head's rows against their word, each
    row's target being the earlier units of its own jieba word, or itself when it starts
    a word (`word_targets`). Every other head learns whatever it learns."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = ReaderLM(config)
    boundary = torch.nn.Linear(config.embed_dim, 1)
    use_starts = starts is not None and boundary_weight > 0
    teach_word = starts is not None and word_head is not None and word_weight > 0
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    if use_starts:
        decay, no_decay = [*decay, boundary.weight], [*no_decay, boundary.bias]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        betas=(0.9, 0.99),
    )
    warmup = max(1, steps // 20)
    n = config.context
    started = time.monotonic()
    model.train()
    for step in range(steps):
        scale = (
            (step + 1) / warmup
            if step < warmup
            else 0.1
            + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))
        )
        for group in optimizer.param_groups:
            group["lr"] = lr * scale
        offsets = rng.integers(0, train_ids.size - n - 1, size=batch)
        window = torch.from_numpy(np.stack([train_ids[o : o + n + 1] for o in offsets]))
        h, weights = model.hidden(window[:, :-1])  # (B, n, C), [(B, H, n, n)] * L
        logits = h @ model.token_embedding.weight.T  # (B, n, V)
        lm_loss = F.cross_entropy(logits.flatten(0, 1), window[:, 1:].flatten())
        loss = lm_loss
        if use_starts:
            assert starts is not None
            label = torch.from_numpy(np.stack([starts[o + 1 : o + n + 1] for o in offsets]))
            counted = label >= 0  # (B, n): the next unit is a unit of a line, not a [BOS]
            aux = F.binary_cross_entropy_with_logits(
                boundary(h).squeeze(-1)[counted], label[counted].float()
            )
            loss = lm_loss + boundary_weight * aux
        if teach_word:  # minus the log of the weight each row puts on its targets
            assert starts is not None and word_head is not None
            target = word_targets(np.stack([starts[o : o + n] for o in offsets]))  # (B, n, n)
            w = weights[word_head[0]][:, word_head[1]]  # (B, n, n)
            on_word = (w * torch.from_numpy(target)).sum(-1)  # (B, n)
            loss = loss + word_weight * -torch.log(on_word + 1e-6).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % log_every == 0 or step + 1 == steps:
            spent = time.monotonic() - started
            rate = (step + 1) / spent
            print(
                f"step {step + 1:>6}/{steps}  loss {lm_loss.item() / LOG2:6.3f} bits/unit  "
                f"{rate:5.2f} steps/s  {(steps - step - 1) / rate / 60:5.1f} min left",
                file=out,
                flush=True,
            )
    return model.eval()


def main(argv: Sequence[str] | None = None) -> int:
    from attention_core.train.corpus import default_dir, verify

    parser = argparse.ArgumentParser(prog="python -m attention_core.reader.fit")
    parser.add_argument("--corpus", type=Path, default=None, help="built corpus folder")
    parser.add_argument("--out", type=Path, default=SHIPPED_DIR)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=THREADS)
    parser.add_argument(
        "--boundary-weight",
        type=float,
        default=BOUNDARY_WEIGHT,
        help="weight of the second target (does the next unit start a jieba word?); 0: none",
    )
    parser.add_argument(
        "--word-head",
        default=WORD_HEAD,
        help="LAYER.HEAD taught to look within its jieba word (see `train`); '': none",
    )
    parser.add_argument("--word-weight", type=float, default=WORD_WEIGHT)
    parser.add_argument(
        "--describe-only",
        action="store_true",
        help="keep the trained files in --out; measure again what the card describes",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    folder = args.corpus or default_dir()
    manifest = verify(folder)
    train_lines, heldout_lines = _lines(folder / "train.txt"), _lines(folder / "heldout.txt")
    found = folder / EVERYDAY
    everyday_set = read_everyday(found) if manifest.get("everyday") else []
    if args.describe_only:
        from attention_core.reader.weights import load

        reader = load(args.out)
        kinds = unit_kinds(reader.vocab)
        train_ids = encode_lines(train_lines, reader.vocab)
        held_ids = encode_lines(heldout_lines, reader.vocab)
        card = {**reader.card, **describe(reader.model, reader.vocab, heldout_lines)}
        card["heldout"] = {
            "model": evaluate(reader.model, held_ids, kinds),
            **baselines(train_ids, held_ids, kinds),
        }
        if everyday_set:
            card["everyday"] = everyday(reader.model, reader.vocab, everyday_set, train_ids, kinds)
        card.pop("sha256", None)
        save(reader.model, reader.vocab, card, args.out)
        print(f"described {args.out}: same-word on {card['same_word']['sentences']} sentences")
        return 0
    vocab = Vocab.from_corpus(train_lines)
    kinds = unit_kinds(vocab)
    train_ids, heldout_ids = encode_lines(train_lines, vocab), encode_lines(heldout_lines, vocab)
    config = ReaderConfig(vocab_size=len(vocab))
    print(
        f"vocabulary {len(vocab)} units; train {train_ids.size} units; held out {heldout_ids.size}"
    )
    started = time.monotonic()
    word_head = tuple(int(x) for x in args.word_head.split(".")) if args.word_head else None
    wanted = args.boundary_weight > 0 or (word_head and args.word_weight > 0)
    starts = word_starts(train_lines, vocab) if wanted else None
    model = train(
        train_ids,
        config,
        steps=args.steps,
        seed=args.seed,
        starts=starts,
        boundary_weight=args.boundary_weight,
        word_head=word_head,
        word_weight=args.word_weight,
    )
    minutes = (time.monotonic() - started) / 60
    figures = {
        "model": evaluate(model, heldout_ids, kinds),
        **baselines(train_ids, heldout_ids, kinds),
    }
    card = {
        "config": config.as_dict(),
        "steps": args.steps,
        "seed": args.seed,
        "threads": args.threads,
        "boundary_weight": args.boundary_weight,
        "word_head": list(word_head) if word_head and args.word_weight > 0 else None,
        "word_weight": args.word_weight,
        "train_minutes": round(minutes, 1),
        "corpus": {k: manifest[k] for k in ("outputs",) if k in manifest},
        "heldout": figures,
        **describe(model, vocab, heldout_lines),
    }
    if everyday_set:
        card["everyday"] = everyday(model, vocab, everyday_set, train_ids, kinds)
        card["corpus"]["everyday"] = manifest["everyday"]
    save(model, vocab, card, args.out)
    for name, row in figures.items():
        print(
            f"{name:8} {row['bits_per_cjk_char']:6.3f} bits/char (zh)  "
            f"{row['bits_per_english_word']:6.3f} bits/word (en)  "
            f"{row['bits_per_unit']:6.3f} bits/unit"
        )
    print(f"wrote {args.out} ({minutes:.1f} min of training)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
