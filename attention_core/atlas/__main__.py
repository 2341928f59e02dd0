"""`python -m attention_core.atlas build --model minilm [--corpus FILE|DIR] [--out DIR]`:
index a corpus for one model (untrained, reader, minilm, or your own model's local
transformers folder), with a progress bar; run it again to resume or to add the
sentences a grown corpus has gained. `--engine dask` runs the chunks as Dask tasks on a
local process pool (no progress bar). Exit status 1 with a message for bad input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from attention_core.atlas.build import CHUNK_SIZE, build, default_index_dir
from attention_core.atlas.models import MODELS
from attention_core.atlas.sentences import AtlasError
from attention_core.pretrained.load import ModelLoadError
from attention_core.train.corpus import CorpusError


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_core.atlas")
    commands = parser.add_subparsers(dest="command", required=True)
    shipped = commands.add_parser(
        "ship", help="rebuild what the package ships: the corpus sample and its small indexes"
    )
    shipped.add_argument("--corpus", type=Path, help="a built corpus folder (default: its cache)")
    command = commands.add_parser("build", help="index a corpus (resumable, incremental)")
    command.add_argument(
        "--model",
        required=True,
        metavar="|".join((*MODELS, "FOLDER")),
        help="one of the app's models, or your own: a local transformers folder",
    )
    command.add_argument(
        "--corpus",
        type=Path,
        help="a text file or a folder of *.txt (default: the project corpus's held-out split)",
    )
    command.add_argument("--out", type=Path, help=f"index folder (default {default_index_dir()})")
    command.add_argument("--limit", type=int, help="index at most this many sentences")
    command.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: measured 2-3x faster than 2 on the shared 2-core machine)",
    )
    command.add_argument(
        "--engine",
        choices=("serial", "dask"),
        default="serial",
        help="dask: one task per chunk on a local Dask process pool (atlas/engine.py)",
    )
    command.add_argument("--workers", type=int, default=None, help="Dask workers (default: CPUs)")
    command.add_argument("--chunk-size", type=int, default=CHUNK_SIZE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.command == "ship":
        return _ship(args.corpus)
    import torch
    from tqdm import tqdm

    # a sentence's matrices are small: two intra-op threads mostly wait for each other
    torch.set_num_threads(max(1, args.threads))
    # Dask's tasks report nothing until they are all done: no bar then
    bar = tqdm(
        unit="sentence", desc=f"atlas {args.model}", file=sys.stderr, disable=args.engine == "dask"
    )

    def progress(done: int, total: int, tokens: int) -> None:
        bar.total = total
        bar.n = done
        bar.set_postfix(tokens=tokens, refresh=False)
        bar.refresh()

    try:
        if args.engine == "dask":
            import os

            from attention_core.atlas.engine import build_dask

            os.environ["OMP_NUM_THREADS"] = str(max(1, args.threads))  # the workers' torch

            report = build_dask(
                args.model,
                args.corpus,
                args.out,
                limit=args.limit,
                chunk_size=args.chunk_size,
                num_workers=args.workers,
            )
        else:
            report = build(
                args.model,
                args.corpus,
                args.out,
                limit=args.limit,
                chunk_size=args.chunk_size,
                progress=progress,
            )
    except (AtlasError, OSError, CorpusError, ValueError, ModelLoadError) as error:
        bar.close()
        print(f"error: {error}", file=sys.stderr)
        return 1
    bar.close()
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    print(
        f"{report.folder}: {report.added} sentences added, {report.kept} already indexed; "
        f"{report.tokens} tokens in {report.seconds:.1f} s ({report.tokens_per_s:.0f} tokens/s)"
    )
    return 0


def _ship(corpus: Path | None) -> int:
    from attention_core.atlas.ship import ship

    try:
        lines = ship(corpus)
    except (AtlasError, OSError, CorpusError, ValueError, ModelLoadError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
