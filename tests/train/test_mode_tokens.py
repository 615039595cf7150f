"""``<tool_on>`` / ``<tool_off>`` become whole tokens of a checkpoint that lacks them (TRL and verl paths)."""

from __future__ import annotations

from pathlib import Path

import transformers

from eviseek.train.mode_tokens import add_mode_tokens, missing_mode_tokens, prepare_checkpoint
from eviseek.train.tiny_model import TinyVLMConfig, build_tiny_vlm, load_tiny_vlm


def test_mode_tokens_are_added_once_grow_the_embeddings_and_decode_as_text(tmp_path: Path) -> None:
    path = build_tiny_vlm(tmp_path / "plain", TinyVLMConfig(mode_tokens=False))
    model, processor = load_tiny_vlm(path)
    tok = processor.tokenizer
    assert len(tok.encode("<tool_on>", add_special_tokens=False)) > 1
    rows = model.get_input_embeddings().weight.shape[0]
    added = add_mode_tokens(model, processor)
    assert sorted(added) == ["<tool_off>", "<tool_on>"]
    assert model.get_input_embeddings().weight.shape[0] == len(tok) == rows + 2
    ids = tok.encode("<tool_on>answer", add_special_tokens=False)
    assert len(tok.encode("<tool_on>", add_special_tokens=False)) == 1
    # TRL and verl decode completions without special tokens: the mode token must survive that.
    assert tok.decode(ids, skip_special_tokens=True).startswith("<tool_on>")
    assert (
        add_mode_tokens(model, processor) == [] and model.get_input_embeddings().weight.shape[0] == rows + 2
    )


def test_prepare_checkpoint_writes_a_copy_only_when_the_tokens_are_missing(tmp_path: Path) -> None:
    ready = build_tiny_vlm(tmp_path / "ready")
    assert prepare_checkpoint(ready, tmp_path / "unused") == ready and not (tmp_path / "unused").exists()
    plain = build_tiny_vlm(tmp_path / "plain", TinyVLMConfig(mode_tokens=False))
    out = prepare_checkpoint(plain, tmp_path / "with-tokens")
    assert out == tmp_path / "with-tokens"
    assert missing_mode_tokens(transformers.AutoTokenizer.from_pretrained(str(out))) == []
    model, processor = load_tiny_vlm(out)
    assert model.get_input_embeddings().weight.shape[0] == len(processor.tokenizer)
    # A second call finds the prepared copy and reuses it.
    assert prepare_checkpoint(plain, out) == out
