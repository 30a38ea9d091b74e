"""Interop with the file formats people already have (tiktoken, GPT-2, ...)."""

from ciyuan.formats.detect import load_tokenizer
from ciyuan.formats.gpt2 import gpt2_tokenizer, load_gpt2
from ciyuan.formats.tiktoken import load_tiktoken_ranks, save_tiktoken_ranks, tiktoken_tokenizer
from ciyuan.formats.vocab_merges import load_bpe, load_merges_txt, load_vocab_txt, save_merges_txt, save_vocab_txt

__all__ = ["load_tokenizer", "load_gpt2", "gpt2_tokenizer", "load_tiktoken_ranks", "save_tiktoken_ranks", "tiktoken_tokenizer",
           "load_bpe", "load_merges_txt", "load_vocab_txt", "save_merges_txt", "save_vocab_txt"]
