"""A tiny Llama-style model and its tokenizer, built locally (no hub access).

The tokenizer is word-level over a small vocabulary (digits, a few words, specials):
small enough that a randomly initialised model finds rewarded outputs by sampling, and
a real `tokenizers` tokenizer that transformers and vLLM load like any other.
vLLM on CPU needs head_dim >= 64, hence hidden_size = 64 * num_heads.
"""

from __future__ import annotations

from pathlib import Path

SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<unk>"]
SORT_VOCAB = [*SPECIAL_TOKENS, "sort:", "->", *(str(d) for d in range(10))]


def build_tokenizer(vocabulary: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel({token: i for i, token in enumerate(vocabulary)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with single spaces
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )


def build_tiny_model(
    out_dir: str | Path,
    vocabulary: list[str] = SORT_VOCAB,
    num_layers: int = 2,
    num_heads: int = 2,
    max_positions: int = 128,
    seed: int = 0,
) -> Path:
    """Save a randomly initialised tiny Llama and its tokenizer to `out_dir` (a model path)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(vocabulary)
    tokenizer.save_pretrained(out)
    config = LlamaConfig(
        vocab_size=len(vocabulary),
        hidden_size=64 * num_heads,
        intermediate_size=128 * num_heads,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    LlamaForCausalLM(config).save_pretrained(out, safe_serialization=True)
    return out
