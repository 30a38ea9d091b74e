"""Interop with the file formats people already have (tiktoken, GPT-2, BERT's vocab.txt,
Hugging Face's tokenizer.json, ...).

Each reader gives the parts of a tokenizer (:class:`~ciyuan.formats.parts.TokenizerParts`);
``Tokenizer.from_tiktoken`` / ``from_gpt2`` / ``from_bert_vocab`` / ``load`` build it.
"""

from ciyuan.formats.bert_vocab import bert_vocab_parts, load_bert_vocab, save_bert_vocab
from ciyuan.formats.detect import detect_format
from ciyuan.formats.gpt2 import gpt2_parts, load_gpt2
from ciyuan.formats.hf_json import read_hf_json, save_hf_json
from ciyuan.formats.parts import TokenizerParts
from ciyuan.formats.tiktoken import load_tiktoken_ranks, save_tiktoken_ranks, tiktoken_parts
from ciyuan.formats.vocab_merges import load_bpe, load_merges_txt, load_vocab_txt, save_merges_txt, save_vocab_txt

__all__ = ["TokenizerParts", "detect_format", "read_hf_json", "save_hf_json", "load_gpt2", "gpt2_parts",
           "load_tiktoken_ranks", "save_tiktoken_ranks",
           "tiktoken_parts", "bert_vocab_parts", "load_bert_vocab", "save_bert_vocab", "load_bpe", "load_merges_txt",
           "load_vocab_txt", "save_merges_txt", "save_vocab_txt"]
