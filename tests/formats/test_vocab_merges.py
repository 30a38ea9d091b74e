"""vocab.txt / merges.txt: written from a trained model, read back into the same model."""

from __future__ import annotations

from ciyuan import Tokenizer
from ciyuan.formats.vocab_merges import load_bpe, load_merges_txt, load_vocab_txt, save_merges_txt, save_vocab_txt
from ciyuan.trainers import BpeTrainer


def test_vocab_and_merges_files_round_trip(tmp_path):
    tok = Tokenizer.train(["hello world, hello there"] * 5,
                          BpeTrainer(280, byte_level=True, special_tokens=["<|endoftext|>"]))
    save_vocab_txt(tok.model, tmp_path / "vocab.txt")
    save_merges_txt(tok.model, tmp_path / "merges.txt")
    vocab_lines = (tmp_path / "vocab.txt").read_text(encoding="utf-8").split("\n")
    assert vocab_lines[0] == "<|endoftext|>" and "Ġhello" in vocab_lines
    merges = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    assert merges[0] == "#version: 0.2" and merges[1] == "h e"
    model = load_bpe(tmp_path / "vocab.txt", tmp_path / "merges.txt", byte_level=True)
    assert model.merges == tok.model.merges and model.get_vocab() == tok.model.get_vocab()
    assert load_vocab_txt(tmp_path / "vocab.txt")["Ġhello"] == tok.token_to_id("Ġhello")
    assert load_merges_txt(tmp_path / "merges.txt")[0] == ("h", "e")
