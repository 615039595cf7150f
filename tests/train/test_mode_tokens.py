"""``<tool_on>`` / ``<tool_off>`` become whole tokens of a checkpoint that lacks them (TRL and verl paths)."""

from __future__ import annotations

from pathlib import Path

import pytest
import transformers

from eviseek.train.mode_tokens import (
    CheckpointNotFound,
    add_mode_tokens,
    main,
    missing_mode_tokens,
    prepare_checkpoint,
    resolve_checkpoint,
)
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


def _hub_cache(root: Path, repo_id: str, checkpoint: Path) -> Path:
    """A hub cache holding ``repo_id`` as ``huggingface-cli download`` lays it out (refs -> snapshot)."""
    repo = root / ("models--" + repo_id.replace("/", "--"))
    commit = "0" * 40
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    for f in checkpoint.iterdir():
        (snap / f.name).write_bytes(f.read_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snap


def test_a_downloaded_hub_id_gets_the_tokens_and_a_missing_one_fails_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = build_tiny_vlm(tmp_path / "plain", TinyVLMConfig(mode_tokens=False))
    cache = tmp_path / "hub"
    snap = _hub_cache(cache, "someorg/tiny-vlm", plain)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    assert resolve_checkpoint("someorg/tiny-vlm") == snap
    out = tmp_path / "tokens" / "tiny-vlm"
    assert main(["someorg/tiny-vlm", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert missing_mode_tokens(transformers.AutoTokenizer.from_pretrained(str(out))) == []

    assert main(["someorg/not-downloaded", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: someorg/not-downloaded is neither a checkpoint")
    assert "huggingface-cli download someorg/not-downloaded" in err[0]
    with pytest.raises(CheckpointNotFound):
        resolve_checkpoint(tmp_path / "no-such-folder")
