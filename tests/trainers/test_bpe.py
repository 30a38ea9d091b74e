"""The native BPE trainer: options, stop rules, inputs, determinism and bad input."""

from __future__ import annotations

import pytest

import ciyuan
from ciyuan import InvalidInputError, Tokenizer, pre_tokenizers
from ciyuan.models import BPE
from ciyuan.pre_tokenizers import WhitespaceSplit
from ciyuan.reference.bpe_train import train_bpe as reference_train
from ciyuan.trainers import BpeTrainer, from_dict

TUTORIAL = {"low": 5, "lower": 2, "newest": 6, "widest": 3}


def merges_of(model):
    return model.merges


def test_tutorial_example_separate_marker():
    model = BpeTrainer(0, max_merges=10, end_of_word_symbol="</w>", tie_break="first").train(TUTORIAL)
    assert merges_of(model) == [
        ("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w"),
        ("n", "e"), ("ne", "w"), ("new", "est</w>"), ("low", "</w>"), ("w", "i"),
    ]


def test_tutorial_example_suffix_form():
    model = BpeTrainer(0, max_merges=3, end_of_word_suffix="</w>", tie_break="first").train(TUTORIAL)
    assert merges_of(model) == [("e", "s"), ("es", "t</w>"), ("l", "o")]


def test_ids_specials_then_alphabet_then_suffixed_then_merges():
    model = BpeTrainer(100, special_tokens=["<unk>"], end_of_word_suffix="</w>", max_merges=1).train({"ba": 3, "ab": 1})
    assert [model.id_to_token(i) for i in range(model.id_limit)] == ["<unk>", "a", "b", "a</w>", "b</w>", "ba</w>"]


def test_byte_level_alphabet_in_printable_order():
    model = BpeTrainer(300, byte_level=True, special_tokens=["<|endoftext|>"]).train({"hi": 2})
    vocab = model.get_vocab()
    assert vocab["<|endoftext|>"] == 0 and vocab["!"] == 1 and vocab["Ā"] == 1 + 188  # byte 0 after the printable ones
    assert model.merges == [("h", "i")]


@pytest.mark.parametrize("tie_break", ["hf", "subword-nmt", "first"])
@pytest.mark.parametrize("form", [{}, {"end_of_word_suffix": "</w>"}, {"end_of_word_symbol": "</w>"},
                                  {"byte_level": True}])
def test_matches_reference_on_small_corpora(tie_break, form):
    corpora = [
        TUTORIAL,
        {"aaaa": 3, "aaa": 2, "abab": 2, "ba": 1},
        {"我们的": 3, "我们": 2, "你们的": 2, "的": 5},
        {"x": 1},
    ]
    for words in corpora:
        ours = BpeTrainer(0, max_merges=30, tie_break=tie_break, **form).train(words)
        tokens, merges = reference_train(words, max_merges=30, tie_break=tie_break, **form)
        assert ours.merges == [(ours.id_to_token(ours.token_to_id(a)), ours.id_to_token(ours.token_to_id(b)))
                               for a, b in merges]
        assert [ours.token_bytes(i) for i in range(ours.id_limit)] == [
            t if isinstance(t, bytes) else t.encode() for t in tokens
        ]


def test_learn_returns_token_bytes_and_merges_without_a_model():
    trainer = BpeTrainer(0, max_merges=10, end_of_word_symbol="</w>", tie_break="first")
    result = trainer.learn(trainer.count_words(TUTORIAL))
    tokens = result.tokens
    merges = [(tokens[a], tokens[b]) for a, b in result.merges]
    model = BpeTrainer(0, max_merges=10, end_of_word_symbol="</w>", tie_break="first").train(TUTORIAL)
    assert [t.decode() for t in tokens] == [model.id_to_token(i) for i in range(model.id_limit)]
    assert [(a.decode(), b.decode()) for a, b in merges] == merges_of(model)
    assert trainer.report is not None and len(trainer.report.merge_counts) == 10


def test_byte_level_with_separate_marker_matches_reference():
    # No BPE model encodes this combination, but the trainer learns it (BBPE with "</w>"); a
    # merged "</w>" is the marker symbol itself, on both sides.
    counts = {"</w></w>": 5, "a</w>": 3, "w>é": 2}
    trainer = BpeTrainer(0, max_merges=20, byte_level=True, end_of_word_symbol="</w>", tie_break="first")
    result = trainer.learn(trainer.count_words(counts))
    tokens = result.tokens
    merges = [(tokens[a], tokens[b]) for a, b in result.merges]
    ref_tokens, ref_merges = reference_train(counts, max_merges=20, byte_level=True, end_of_word_symbol="</w>",
                                             tie_break="first")
    assert tokens == ref_tokens and merges == ref_merges
    assert (b"</w>", b"</w>") in merges


def test_stops_at_vocab_size_min_frequency_and_max_merges():
    words = {"abcd": 10, "abce": 3, "xy": 1}
    t = BpeTrainer(9)
    model = t.train(words)
    assert model.vocab_size == 9 and t.report.stop_reason == "vocab_size reached"
    t = BpeTrainer(1000, min_frequency=3)
    model = t.train(words)
    assert t.report.merge_counts and min(t.report.merge_counts) >= 3 and "min_frequency" in t.report.stop_reason
    assert BpeTrainer(1000, max_merges=2).train(words).merges == [("a", "b"), ("ab", "c")]


def test_limit_and_initial_alphabet():
    model = BpeTrainer(100, limit_alphabet=2, initial_alphabet=["z"]).train({"aab": 5, "c": 1})
    vocab = model.get_vocab()
    assert "z" in vocab and "a" in vocab and "b" not in vocab and "c" not in vocab


def test_max_token_length():
    model = BpeTrainer(1000, max_token_length=3).train({"abcd": 10, "abc": 5})
    assert model.merges == [("a", "b"), ("ab", "c")]  # "abcd" would be 4 long


def test_one_repeated_character():
    model = BpeTrainer(1000).train(["a" * 1000])
    assert model.get_vocab()["a" * 512] and ("a" * 8, "a" * 8) in model.merges
    tok = Tokenizer.train(["a" * 1000], BpeTrainer(1000, byte_level=True))
    assert tok.decode(tok.encode("a" * 777).ids) == "a" * 777


def test_empty_corpus_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidInputError, match="empty"):
        BpeTrainer(100).train([])
    (tmp_path / "empty.txt").write_text("   \n\n")
    with pytest.raises(InvalidInputError, match="empty"):
        Tokenizer.train(tmp_path / "empty.txt", BpeTrainer(100))


def test_vocab_size_below_alphabet_is_a_clear_error():
    with pytest.raises(InvalidInputError, match="vocab_size 100 is smaller than the 256"):
        BpeTrainer(100, byte_level=True).train(["hello"])
    with pytest.raises(InvalidInputError, match="raise vocab_size"):
        BpeTrainer(3).train(["abcdef"])


def test_invalid_utf8_names_file_and_offset(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello world\nabc \xff\xfe def\n")
    with pytest.raises(InvalidInputError, match=r"bad\.txt: invalid UTF-8 at byte 16 \(line 2\)"):
        Tokenizer.train(bad, BpeTrainer(300, byte_level=True))
    tok = Tokenizer.train(bad, BpeTrainer(300, byte_level=True), errors="replace")
    assert tok.decode(tok.encode("abc \ufffd").ids) == "abc \ufffd"


def test_bad_options():
    with pytest.raises(InvalidInputError):
        BpeTrainer(-1)
    with pytest.raises(InvalidInputError):
        BpeTrainer(100, tie_break="random")
    with pytest.raises(InvalidInputError):
        BpeTrainer(100, end_of_word_suffix="</w>", end_of_word_symbol="</w>")
    with pytest.raises(InvalidInputError):
        BpeTrainer(100, byte_level=True, end_of_word_suffix="</w>")
    with pytest.raises(InvalidInputError):
        BpeTrainer(0)  # would never stop
    with pytest.raises(TypeError):
        BpeTrainer(100, vocab=3)  # unknown option


def test_inputs_files_iterators_and_counts_agree(tmp_path):
    lines = ["the cat sat on the mat\n", "the dog sat\n", "a cat and a dog\n"] * 20
    f = tmp_path / "c.txt"
    f.write_text("".join(lines))
    pre = pre_tokenizers.WordPunct()
    trainer = BpeTrainer(60, min_frequency=2)
    from_file = trainer.train(f, pre)
    from_iter = trainer.train(iter(lines), pre)
    from_paths = trainer.train([str(f)], pre)
    counts = {}
    for line in lines:
        for w in line.split():
            counts[w] = counts.get(w, 0) + 1
    from_counts = trainer.train(counts)
    assert from_file.merges == from_iter.merges == from_paths.merges == from_counts.merges
    assert from_file.get_vocab() == from_counts.get_vocab()


def test_python_pre_tokenizer_and_normalizer():
    class Chars:  # any object with split(text) -> spans
        def split(self, text):
            return [(i, i + 2) for i in range(0, len(text) - 1, 2)]

    model = BpeTrainer(100, lowercase=True).train(["ABab" * 5], Chars())
    assert model.merges == [("a", "b")]
    tok = Tokenizer.train(["AB ab"] * 3, BpeTrainer(100, lowercase=True))
    assert tok.encode("AB").tokens == ["ab"]  # the trained tokenizer lowercases too


def test_threads_give_identical_results(tmp_path):
    text = "".join(f"line {i} with words w{i % 97} and more{i % 13}\n" for i in range(20000))
    f = tmp_path / "c.txt"
    f.write_text(text)
    outs = []
    for threads in (1, 2):
        tok = Tokenizer.train(f, BpeTrainer(2000, byte_level=True, threads=threads))
        tok.save(tmp_path / f"t{threads}.json")
        outs.append((tmp_path / f"t{threads}.json").read_bytes())
    assert outs[0] == outs[1]


def test_progress_bar(capsys):
    BpeTrainer(300, byte_level=True, show_progress=True).train(["hello world"] * 5)
    assert "merges" in capsys.readouterr().err


def test_to_dict_round_trip():
    t = BpeTrainer(500, min_frequency=2, special_tokens=["<s>"], end_of_word_suffix="</w>", tie_break="subword-nmt")
    assert from_dict(t.to_dict()).to_dict() == t.to_dict()
    t = BpeTrainer(50, end_of_word_symbol="</w>", tie_break="first-moved", live_vocab=True)
    assert from_dict(t.to_dict()).to_dict() == t.to_dict() and t.to_dict()["live_vocab"] is True


def test_live_vocab_counts_the_symbols_in_use():
    # Document 000's rule: vocab_size counts the symbols the words still use, after each merge.
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    trainer = BpeTrainer(10, end_of_word_symbol="</w>", tie_break="first-moved", live_vocab=True)
    result = trainer.learn(trainer.count_words(counts))
    tokens = [t.decode() for t in result.tokens]
    assert [tokens[a] + tokens[b] for a, b in result.merges] == ["es"]  # 11 symbols in use after it
    assert [(tokens[i], n) for i, n in result.live_vocab][:4] == [("w", 16), ("</w>", 16), ("es", 9), ("t", 9)]
    assert result.stop_reason == "vocab_size reached"
    # With the other tie rules too (subword-nmt's greatest text merges t + </w> first).
    trainer = BpeTrainer(10, end_of_word_symbol="</w>", tie_break="subword-nmt", live_vocab=True)
    result = trainer.learn(trainer.count_words(counts))
    assert [(result.tokens[i], n) for i, n in result.live_vocab][:4] == [(b"e", 17), (b"w", 16), (b"s", 9),
                                                                        (b"t</w>", 9)]
    with pytest.raises(InvalidInputError, match="vocab_size 10"):  # the usual rule refuses to start
        BpeTrainer(10, end_of_word_symbol="</w>").train(counts)


def test_first_moved_tie_break_follows_the_changed_words():
    # After merging (a, b), "ab c" moves behind "x c": (x, c) is now met before (ab, c).
    counts = {"abc": 2, "xc": 2}
    first = BpeTrainer(0, max_merges=2, tie_break="first").train(counts)
    moved = BpeTrainer(0, max_merges=2, tie_break="first-moved").train(counts)
    assert first.merges == [("a", "b"), ("ab", "c")]
    assert moved.merges == [("a", "b"), ("x", "c")]


def test_train_on_instance_keeps_pipeline_and_saves(tmp_path):
    tok = Tokenizer.train(["hello world"] * 3, BpeTrainer(300, byte_level=True))
    tok.train_model(["other words here"] * 3, BpeTrainer(280, byte_level=True))
    assert tok.pre_tokenizer == pre_tokenizers.Split("gpt2")
    tok.save(tmp_path / "tok.json")
    again = Tokenizer.from_file(tmp_path / "tok.json")
    assert again.encode("other words").ids == tok.encode("other words").ids


def test_separate_marker_tokenizer():
    # "l o w </w>": the marker is its own last symbol; its tokens cover no input.
    corpus = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    trainer = BpeTrainer(40, max_merges=10, end_of_word_symbol="</w>", tie_break="first", special_tokens=["<UNK>"])
    tok = Tokenizer.train(corpus, trainer, pre_tokenizer=WhitespaceSplit())
    assert tok.model.merges[:4] == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o")]
    enc = tok.encode("lowest newest lo")
    assert enc.tokens == ["low", "est</w>", "newest</w>", "lo", "</w>"]
    assert enc.offsets == [(0, 3), (3, 6), (7, 13), (14, 16), (16, 16)]
    assert tok.decode(enc.ids) == "lowest newest lo"
    # The same tokens from the merges applied in plain Python.
    from ciyuan.reference.bpe import encode_word_by_merges

    merges = tok.model.merges
    for word in ("lowest", "newest", "lo", "widest"):
        symbols = encode_word_by_merges(word + "\0",
                                        [(a.replace("</w>", "\0"), b.replace("</w>", "\0")) for a, b in merges])
        assert [t.replace("\0", "</w>") for t in symbols] == tok.encode(word).tokens
    # Greedy longest match takes the marker with the word's end when it can.
    greedy = Tokenizer(BPE(tok.model.get_vocab(), merges, end_of_word_symbol="</w>", encode_mode="longest_match"),
                       pre_tokenizer=WhitespaceSplit())
    assert greedy.encode("lowest lo").tokens == ["low", "est</w>", "lo", "</w>"]


def test_suffix_tokenizer_round_trip():
    tok = Tokenizer.train(["low lower newest widest"] * 5, BpeTrainer(40, end_of_word_suffix="</w>"))
    enc = tok.encode("lowest newer")
    assert tok.decode(enc.ids) == "lowest newer"
    assert enc.tokens[-1].endswith("</w>")


def test_counts_are_64_bit():
    model = BpeTrainer(0, max_merges=2).train({"ab": 2**40, "cd": 2**40 + 1, "ef": 3})
    assert model.merges == [("c", "d"), ("a", "b")]


def test_threads_identical_on_real_text(tmp_path):
    from tests.conftest import shared

    path = shared("corpora", "en", "tinyshakespeare.txt")
    files = []
    for threads in (1, 2):
        tok = Tokenizer.train(path, BpeTrainer(5000, byte_level=True, threads=threads))
        out = tmp_path / f"{threads}"
        out.mkdir()
        tok.save(out / "tok.json")
        ciyuan.formats.save_merges_txt(tok.model, out / "merges.txt")
        ciyuan.formats.save_vocab_txt(tok.model, out / "vocab.txt")
        files.append([(out / n).read_bytes() for n in ("tok.json", "merges.txt", "vocab.txt")])
    assert files[0] == files[1]
