"""``<tool_on>`` / ``<tool_off>`` become whole tokens of a tokenizer that lacks them."""

from __future__ import annotations

from typing import Any

import tokenizers
import transformers

from eviseek.train.trl_autotool.run import add_mode_tokens


class _Model:
    def __init__(self) -> None:
        self.sizes: list[int] = []

    def resize_token_embeddings(self, n: int) -> Any:
        self.sizes.append(n)


def _plain_tokenizer() -> Any:
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(["the tool is on or off", "answer the question"] * 10, trainer=trainer)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok)


def test_mode_tokens_are_added_once_and_decode_as_text() -> None:
    tok, model = _plain_tokenizer(), _Model()
    assert len(tok.encode("<tool_on>", add_special_tokens=False)) > 1
    added = add_mode_tokens(model, tok)
    assert sorted(added) == ["<tool_off>", "<tool_on>"] and model.sizes == [len(tok)]
    ids = tok.encode("<tool_on>answer", add_special_tokens=False)
    assert len(tok.encode("<tool_on>", add_special_tokens=False)) == 1
    # TRL decodes completions without special tokens: the mode token must survive that.
    assert tok.decode(ids, skip_special_tokens=True).startswith("<tool_on>")
    assert add_mode_tokens(model, tok) == [] and model.sizes == [len(tok)]
