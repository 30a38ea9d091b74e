"""Word counting under a memory limit (spilled sorted runs, merged back) and the exact merge of
partial counts: both must give what one in-memory pass gives - words, counts, total and
first-seen order - so that every trainer learns byte-identical models."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.cli import main
from ciyuan.errors import InvalidInputError
from ciyuan.normalizers import BertNormalizer
from ciyuan.pre_tokenizers import BertPreTokenizer, Metaspace, Split, WhitespaceSplit
from ciyuan.trainers import BpeTrainer, UnigramTrainer, WordLevelTrainer, WordPieceTrainer
from ciyuan.trainers.corpus import WordCounts, count_words, merge_counts
from ciyuan.trainers.spill import parse_memory_limit
from tests.conftest import read_prefix, shared

# The smallest limit: a main table of 128 KiB, so a 1 MB corpus spills many runs.
TINY = "256KB"


@pytest.fixture(scope="module")
def shakespeare():
    return shared("corpora", "en", "tinyshakespeare.txt")


def snapshot(counts: WordCounts):
    return counts.words(), counts.total


# -- the limit ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("64MB", 64 << 20), ("64mb", 64 << 20), ("64 MiB", 64 << 20), ("512k", 512 << 10), ("1.5GB", 3 << 29),
    ("2G", 2 << 30), ("300000", 300000), (270000, 270000), (None, None),
])
def test_memory_limit_spellings(text, expected):
    assert parse_memory_limit(text) == expected


@pytest.mark.parametrize("bad", ["", "lots", "64XB", "-5MB", "1e9", "64KB", 1000, True, 3.5])
def test_bad_memory_limits_are_refused_when_the_trainer_is_made(bad):
    with pytest.raises(InvalidInputError, match="memory_limit"):
        BpeTrainer(300, memory_limit=bad)


# -- counting: the same words, counts and order with and without a limit ---------------------

STAGES = {
    "gpt2 scanner": (None, Split("gpt2")),
    "bert": (BertNormalizer(lowercase=True), BertPreTokenizer()),
    "whitespace": (None, WhitespaceSplit()),
    "metaspace (python stages)": (None, Metaspace()),
    "lines": (None, None),
}


@pytest.mark.parametrize("stages", list(STAGES), ids=list(STAGES))
@pytest.mark.parametrize("threads", [1, 2])
def test_file_counted_under_a_tiny_limit_equals_the_unlimited_count(shakespeare, stages, threads, tmp_path):
    normalizer, pre = STAGES[stages]
    full = count_words(shakespeare, pre, normalizer, threads=threads)
    limited = count_words(shakespeare, pre, normalizer, threads=threads, memory_limit=TINY, spill_dir=tmp_path)
    assert full.runs == 0
    assert limited.runs > 3  # the limit was reached, many times
    assert snapshot(limited) == snapshot(full)
    assert list(tmp_path.iterdir()) == []  # the runs' directory is gone


def test_texts_lowercased_and_replaced_bytes_under_a_limit(shakespeare):
    texts = read_prefix(shakespeare, 400_000).splitlines(keepends=True)
    for options in ({"lowercase": True}, {}):
        full = count_words(texts, Split("gpt2"), **options)
        limited = count_words(texts, Split("gpt2"), memory_limit=TINY, **options)
        assert limited.runs > 1
        assert snapshot(limited) == snapshot(full)


def test_merged_words_are_held_exactly_sized(shakespeare):
    full = count_words(shakespeare, Split("gpt2"))
    limited = count_words(shakespeare, Split("gpt2"), memory_limit=TINY)
    key_bytes = sum(len(w) for w, _ in full.words())
    # 32 bytes per word and the key bytes: no hash index, no spare capacity (with or without a limit)
    assert limited.memory == full.memory == 32 * len(full) + key_bytes < full.peak_memory
    assert limited.peak_memory <= parse_memory_limit(TINY) // 2


def test_words_added_after_the_merge_are_counted_on(shakespeare):
    limited = count_words(shakespeare, Split("gpt2"), memory_limit=TINY)
    limited.merge(count_words(["zzzunseen the"], Split("gpt2")))
    full = count_words(shakespeare, Split("gpt2"))
    full.merge(count_words(["zzzunseen the"], Split("gpt2")))
    assert snapshot(limited) == snapshot(full)


def test_the_runs_are_removed_when_counting_fails(tmp_path):
    def texts():
        for i in range(20000):
            yield f"word{i} and more{i} words"
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        count_words(texts(), WhitespaceSplit(), memory_limit=TINY, spill_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_spill_dir_must_be_a_directory(tmp_path):
    with pytest.raises(InvalidInputError, match="spill_dir"):
        count_words(["a b"], memory_limit=TINY, spill_dir=tmp_path / "missing")


# -- training: byte-identical models -----------------------------------------------------------

def test_bpe_merges_identical_under_a_tiny_limit(shakespeare):
    def train(**limit):
        tok = Tokenizer.train(shakespeare, BpeTrainer(1000, byte_level=True, **limit))
        return tok.to_dict()["model"]

    assert train(memory_limit=TINY) == train()


def test_wordpiece_vocab_identical_under_a_tiny_limit(shakespeare):
    def train(**limit):
        return Tokenizer.train(shakespeare, WordPieceTrainer(800, lowercase=True, **limit)).get_vocab()

    assert train(memory_limit=TINY) == train()


def test_unigram_identical_under_a_tiny_limit(shakespeare):
    text = read_prefix(shakespeare, 300_000).splitlines()

    def train(**limit):
        trainer = UnigramTrainer(300, seed_size=20000, **limit)
        return Tokenizer.train(text, trainer).to_dict()["model"]

    assert train(memory_limit=TINY) == train()


def test_word_level_identical_under_a_tiny_limit(shakespeare):
    def train(**limit):
        return Tokenizer.train(shakespeare, WordLevelTrainer(3000, **limit)).get_vocab()

    assert train(memory_limit=TINY) == train()


def test_cli_memory_limit(shakespeare, tmp_path):
    outputs = []
    for extra in ([], ["--memory-limit", TINY, "--spill-dir", str(tmp_path)]):
        out = tmp_path / f"tok{len(extra)}.json"
        merges = tmp_path / f"merges{len(extra)}.txt"
        main(["train", "--model", "bpe", "--byte-level", "--vocab-size", "600", "--no-progress", "--output",
              str(out), "--merges", str(merges), str(shakespeare), *extra])
        outputs.append((out.read_bytes(), merges.read_bytes()))
    assert outputs[0] == outputs[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merges0.txt", "merges4.txt", "tok0.json", "tok4.json"]


def test_cli_bad_memory_limit_in_the_flags_words(shakespeare, tmp_path, capsys):
    assert main(["train", "--vocab-size", "300", "--memory-limit", "lots", "--output", str(tmp_path / "t.json"),
                 str(shakespeare)]) == 1
    assert "--memory-limit must be bytes or a size such as '64MB'" in capsys.readouterr().err
    assert main(["train", "--vocab-size", "300", "--memory-limit", "1MB", "--spill-dir", str(tmp_path / "no"),
                 "--output", str(tmp_path / "t.json"), str(shakespeare)]) == 1
    assert "is not a directory" in capsys.readouterr().err


# -- the exact merge of partial counts ---------------------------------------------------------

words = st.text(alphabet="ab c\n.é中", max_size=12)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(words, max_size=30), cuts=st.lists(st.integers(0, 30), max_size=4),
       pre=st.sampled_from(["gpt2", "whitespace", "lines"]))
def test_merged_parts_equal_one_pass(texts, cuts, pre):
    pre_tokenizer = {"gpt2": Split("gpt2"), "whitespace": WhitespaceSplit(), "lines": None}[pre]
    bounds = [0, *sorted(min(c, len(texts)) for c in cuts), len(texts)]
    parts = [count_words(texts[a:b], pre_tokenizer) for a, b in zip(bounds, bounds[1:])]
    whole = count_words(texts, pre_tokenizer)
    merged = merge_counts(parts)
    assert snapshot(merged) == snapshot(whole)
    # the same through bytes and pickles, as counts travel between processes
    travelled = merge_counts(pickle.loads(pickle.dumps(p)) for p in parts)
    assert snapshot(travelled) == snapshot(whole)


def test_merged_file_parts_train_the_same_merges(shakespeare, tmp_path):
    lines = shakespeare.read_text(encoding="utf-8").splitlines(keepends=True)
    third = len(lines) // 3
    files = []
    for k, part in enumerate((lines[:third], lines[third:2 * third], lines[2 * third:])):
        files.append(tmp_path / f"part{k}.txt")
        files[-1].write_text("".join(part), encoding="utf-8")
    trainer = BpeTrainer(700, byte_level=True)
    merged = merge_counts(count_words(f, Split("gpt2")) for f in files)
    whole = count_words(shakespeare, Split("gpt2"))
    assert snapshot(merged) == snapshot(whole)
    assert trainer.train_words(merged).to_dict() == trainer.train_words(whole).to_dict()


def test_merge_refuses_other_things():
    counts = count_words(["a b"])
    with pytest.raises(InvalidInputError, match="WordCounts"):
        counts.merge({"a": 1})  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="itself"):
        counts.merge(counts)
    with pytest.raises(InvalidInputError, match="word-count dump"):
        WordCounts.from_bytes(b"not counts")


# -- the native spill against the pure-Python twin (ciyuan.reference.word_runs) -----------------

def _pieces(texts):
    """(word bytes, first-seen position) as the native counter positions GPT-2's pieces: a text's
    base is the bytes (plus one) of the texts before it."""
    from ciyuan import _core

    base = 0
    for text in texts:
        data = text.encode("utf-8")
        for s, e in _core.split_pieces("gpt2", data):
            yield data[s:e], base + s
        base += len(data) + 1


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.text(alphabet="ab c\n.é中1", max_size=25), max_size=60),
       limit=st.sampled_from([2 << 10, 24 << 10, 256 << 10, 0]), table_words=st.integers(1, 8))
def test_native_spill_and_merge_equal_the_reference(texts, limit, table_words, tmp_path_factory):
    from ciyuan import _core
    from ciyuan.front_end import native_front_end
    from ciyuan.reference import word_runs

    pieces = list(_pieces(texts))
    expected = word_runs.ordered(word_runs.count_in_memory(pieces))
    assert word_runs.ordered(word_runs.count_spilling(pieces, table_words)) == expected
    counter = _core.WordCounter(native_front_end(None, Split("gpt2"), None))
    # any limit goes natively (2 KiB: nearly every new word spills, and >64 runs merge in groups)
    counter.set_memory_limit(limit, str(tmp_path_factory.mktemp("runs")))
    for k in range(0, len(texts), 7):
        counter.add_texts(texts[k:k + 7], 1)
    counter.finish()
    assert counter.words() == expected
    assert counter.total == len(pieces)
    # partial counts of consecutive parts, merged natively and by the twin
    half = len(texts) // 2
    parts = []
    for part in (texts[:half], texts[half:]):
        c = _core.WordCounter(native_front_end(None, Split("gpt2"), None))
        c.add_texts(part, 1)
        parts.append(c)
    merged = _core.WordCounter(native_front_end(None, Split("gpt2"), None))
    for c in parts:
        merged.merge(c)
    twin = word_runs.merge_parts([(word_runs.count_in_memory(_pieces(p)), sum(len(t.encode()) + 1 for t in p))
                                  for p in (texts[:half], texts[half:])])
    assert merged.words() == word_runs.ordered(twin) == expected
