"""``<tool_on>`` and ``<tool_off>`` as whole tokens, for both training back ends.

The paper defines the two mode tokens as special control tokens (section 3.3). A checkpoint that
lacks them would split each into several sub-word pieces, and the policy's mode choice would then
not be one decision. :func:`add_mode_tokens` adds them to a loaded tokenizer and model (the TRL
path calls it on every model it loads); :func:`prepare_checkpoint` writes a copy of a checkpoint
with them added, for back ends that load the model themselves from a path (verl). Both use only
``transformers`` and ``tokenizers``, so they run in verl's environment as well as TRL's.

    python -m eviseek.train.mode_tokens MODEL OUT_DIR   # prints the directory to train from

``MODEL`` is a checkpoint folder or a hub id already downloaded (``huggingface-cli download
MODEL``); a hub id that is not in the local cache stops the command with one ``error:`` line
(exit 1) rather than leaving the tokens unchecked.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from eviseek._lazy import require
from eviseek.autotool.protocol import MODE_TOKENS


def missing_mode_tokens(tokenizer: Any) -> list[str]:
    """The mode tokens the tokenizer does not encode as one token."""
    tokenizer = getattr(tokenizer, "tokenizer", tokenizer)
    return [t for t in MODE_TOKENS if len(tokenizer.encode(t, add_special_tokens=False)) != 1]


def add_mode_tokens(model: Any, processor: Any) -> list[str]:
    """Make ``<tool_on>`` and ``<tool_off>`` single tokens of the tokenizer; returns those added.

    They are added as whole, unnormalised tokens that still decode as text (``special=False``):
    TRL and verl decode completions with ``skip_special_tokens=True``, and a mode token dropped
    there would hide the mode from the rewards. The embedding matrix grows only when the new
    ids fall beyond it (Qwen checkpoints keep spare rows); new rows start from the model's
    initialisation.
    """
    tokenizers = require("tokenizers", "train", "adding the AutoTool mode tokens")
    tokenizer = getattr(processor, "tokenizer", processor)
    missing = missing_mode_tokens(tokenizer)
    if missing:
        tokenizer.add_tokens([tokenizers.AddedToken(t, special=False, normalized=False) for t in missing])
        rows = model.get_input_embeddings().weight.shape[0]
        if len(tokenizer) > rows:
            model.resize_token_embeddings(len(tokenizer))
    return missing


class CheckpointNotFound(Exception):
    """``MODEL`` is neither a folder nor a hub id in the local cache (the message says what to do)."""


def resolve_checkpoint(model: str | Path) -> Path:
    """The local folder of ``model``: the folder itself, or a downloaded hub id's snapshot folder.

    Nothing is downloaded (training launches should not fetch weights implicitly); a hub id that
    is not cached raises :class:`CheckpointNotFound` naming the download command.
    """
    path = Path(model)
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=str(model), local_files_only=True))
    except Exception as exc:  # not a valid id, or not in the cache: both mean "download it first"
        raise CheckpointNotFound(
            f"{model} is neither a checkpoint folder nor a hub id in the local cache; download it "
            f"first (huggingface-cli download {model}) or pass the checkpoint's folder"
        ) from exc


def prepare_checkpoint(model_dir: str | Path, out_dir: str | Path) -> Path:
    """A checkpoint whose tokenizer has both mode tokens as whole tokens.

    Returns ``model_dir`` itself when it already has them; otherwise copies the checkpoint's
    files to ``out_dir`` with the model and tokenizer saved again after :func:`add_mode_tokens`,
    and returns ``out_dir``. A ready ``out_dir`` (both tokens whole, weights present) is reused.
    """
    transformers = require("transformers", "train", "preparing a checkpoint with the mode tokens")
    src, out = resolve_checkpoint(model_dir), Path(out_dir)
    if not missing_mode_tokens(transformers.AutoTokenizer.from_pretrained(str(src))):
        return src
    if (out / "config.json").is_file() and not missing_mode_tokens(
        transformers.AutoTokenizer.from_pretrained(str(out))
    ):
        return out
    # Everything but the weights and the tokenizer is copied as it is (processor and generation
    # configs, chat template); the tokenizer and the model are saved again with the tokens added.
    # The processor is not loaded: in verl's environment Qwen's image processors need torchvision.
    out.mkdir(parents=True, exist_ok=True)
    for f in src.iterdir():
        if (
            f.is_file()
            and not f.name.endswith((".safetensors", ".bin", ".pt"))
            and "index.json" not in f.name
        ):
            shutil.copy2(f, out / f.name)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(src))
    loader = getattr(transformers, "AutoModelForImageTextToText", None) or transformers.AutoModelForVision2Seq
    model = loader.from_pretrained(str(src), dtype="auto")
    add_mode_tokens(model, tokenizer)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m eviseek.train.mode_tokens MODEL OUT_DIR", file=sys.stderr)
        return 2
    try:
        print(prepare_checkpoint(args[0], args[1]))
    except CheckpointNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
