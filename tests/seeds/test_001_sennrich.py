"""Document 001 (BPE learning as in Sennrich et al.; greedy encoding and detokenization):
every worked example and printed output, and the native merge loop held against the document's
per-step functions and the reference trainer.

The document's test corpus and printed outputs are embedded below: they are the specification.
"""

from __future__ import annotations

from typing import Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import textbook as tb
from ciyuan.errors import InvalidInputError
from ciyuan.reference.bpe_train import train_bpe
from ciyuan.reference.merge_table import apply_merge_table
from ciyuan.reference.sennrich import greedy_split, split_by_substrings
from tests.conftest import read_prefix, shared

DOC_CORPUS = (
    'Object raspberrypi functools dict kwargs . Gevent raspberrypi functools . Dunder raspberrypi '
    "decorator dict didn't lambda zip import pyramid, she lambda iterate ?\n"
    'Kwargs raspberrypi diversity unit object gevent . Import fall integration decorator unit django '
    'yield functools twisted . Dunder integration decorator he she future . Python raspberrypi community '
    'pypy . Kwargs integration beautiful test reduce gil python closure . Gevent he integration generator '
    "fall test kwargs raise didn't visor he itertools ...\n"
    "Reduce integration coroutine bdfl he python . Cython didn't integration while beautiful list python "
    "didn't nit !\n"
    'Object fall diversity 2to3 dunder script . Python fall for : integration exception dict kwargs '
    'dunder pycon . Import raspberrypi beautiful test import six web . Future integration mercurial self '
    'script web . Return raspberrypi community test she stable .\n'
    'Django raspberrypi mercurial unit import yield raspberrypi visual rocksdahouse . Dunder raspberrypi '
    'mercurial list reduce class test scipy helmet zip ?'
)

# What the document prints after 100 merges (one line; cut here at spaces).
PRINTED_VOCAB = (
    "{'O bject</w>': 2, 'raspberrypi</w>': 10, 'functools</w>': 3, 'dict</w>': 3, 'kwargs</w>': 3, "
    '\'.</w>\': 14, \'G event</w>\': 2, \'Dunder</w>\': 3, \'decorator</w>\': 3, "didn\'t</w>": 4, \'la m bd a '
    "</w>': 2, 'z ip </w>': 2, 'import</w>': 3, 'py ra m i d , </w>': 1, 'she</w>': 3, 'i te rat e</w>': "
    "1, '? </w>': 2, 'K wargs</w>': 2, 'di v er s ity</w>': 2, 'unit</w>': 3, 'o bject</w>': 1, 'g "
    "event</w>': 1, 'I mport</w>': 2, 'fall</w>': 4, 'integration</w>': 8, 'd j a n g o </w>': 1, 'y i el "
    "d</w>': 2, 't w is te d</w>': 1, 'he</w>': 4, 'f ut ure</w>': 1, 'P ython</w>': 2, 'c o m m un "
    "ity</w>': 2, 'p yp y</w>': 1, 'beautifu l</w>': 3, 'test</w>': 5, 'r e d u c e</w>': 2, 'g i l</w>': "
    "1, 'py thon</w>': 3, 'c l o s ure</w>': 1, 'g en e rator</w>': 1, 'ra is e</w>': 1, 'v is or</w>': "
    "1, 'it er tools</w>': 1, '. . .</w>': 1, 'R e d u c e</w>': 1, 'c or o ut in e</w>': 1, 'bd f "
    "l</w>': 1, 'C ython</w>': 1, 'w h i l e</w>': 1, 'l i st</w>': 2, 'n it</w>': 1, '! </w>': 1, '2 to "
    "3 </w>': 1, 'd under</w>': 2, 's c r ip t</w>': 2, 'f or</w>': 1, ': </w>': 1, 'e x c e p t "
    "ion</w>': 1, 'py c on</w>': 1, 's i x </w>': 1, 'w e b </w>': 2, 'F ut ure</w>': 1, 'm er c ur i "
    "al</w>': 3, 's el f </w>': 1, 'R e t ur n</w>': 1, 's t a b l e</w>': 1, 'D j a n g o </w>': 1, 'v "
    "is u al</w>': 1, 'r o c k s d a h o u s e</w>': 1, 'c la s s</w>': 1, 's c i py </w>': 1, 'h el m e "
    "t</w>': 1}"
)

# The top-20 table the document prints (subword padded to 20 characters, a space, the count).
PRINTED_TOP_20 = """\
</w>                 17
c                    17
.</w>                15
i                    13
s                    12
m                    11
raspberrypi</w>      10
e                    10
e</w>                9
o                    9
d                    8
integration</w>      8
a                    6
py                   6
er                   6
g                    5
l</w>                5
test</w>             5
r                    5
u                    5
"""

# The encoding example's subword dictionary, sentence and printed outputs.
ENCODE_DICT = {"err</w>": 2, "tain</w>": 3, "moun": 3, "est</w>": 4, "high": 2, "the</w>": 5, "and</w>": 10,
               "l": 1, "g": 1, "a": 1, "r": 1}
ENCODE_SENTENCE = "the highest and largest mountain 好"
PRINTED_TOKENS = ("['the</w>', 'high', 'est</w>', 'and</w>', 'l', 'a', 'r', 'g', 'est</w>', 'moun', 'tain</w>', "
                  "'<unk>']\n")
PRINTED_TEXT = "the highest and largest mountain \n"

LOW_EXAMPLE = {"l o w </w>": 5, "l o w e r </w>": 2, "n e w e s t </w>": 6, "w i d e s t </w>": 3}


def per_step(vocab: Dict[str, int], num_merges: int):
    """The document's loop with ciyuan's get_stats / merge_vocab: (merges, vocab)."""
    merges = []
    for _ in range(num_merges):
        stats = tb.get_stats(vocab)
        if not stats:
            break
        best = max(stats, key=stats.__getitem__)
        merges.append(best)
        vocab = tb.merge_vocab(best, vocab)
    return merges, vocab


def reference_run(vocab: Dict[str, int], num_merges: int):
    """The reference trainer (ties: first seen) and the merges applied in order: (merges, vocab)."""
    words = {key.replace(" ", "")[: -len("</w>")]: n for key, n in vocab.items()}
    _, merges = train_bpe(words, max_merges=num_merges, end_of_word_symbol="</w>", tie_break="first")
    final = {" ".join(apply_merge_table([*w, "</w>"], merges)): n for w, n in words.items()}  # type: ignore[misc]
    return merges, final


# -- the worked example (l o w </w>) ------------------------------------------------------------


def test_worked_example_iterations_one_to_three():
    # Iter 1: ("e", "s") occurs 6 + 3 = 9 times; Iter 2: ("es", "t"); Iter 3: ("est", "</w>").
    assert tb.get_stats(LOW_EXAMPLE)[("e", "s")] == 9
    printed = [
        "{'l o w </w>': 5, 'l o w e r </w>': 2, 'n e w es t </w>': 6, 'w i d es t </w>': 3}",
        "{'l o w </w>': 5, 'l o w e r </w>': 2, 'n e w est </w>': 6, 'w i d est </w>': 3}",
        "{'l o w </w>': 5, 'l o w e r </w>': 2, 'n e w est</w>': 6, 'w i d est</w>': 3}",
    ]
    for k, text in enumerate(printed, 1):
        merges, vocab = tb.learn_bpe(LOW_EXAMPLE, k)
        assert str(vocab) == text
        assert merges == [("e", "s"), ("es", "t"), ("est", "</w>")][:k]
        assert str(per_step(LOW_EXAMPLE, k)[1]) == text


def test_vocabulary_changes_by_plus_one_zero_or_minus_one():
    # Each merge adds the new subword and may dissolve one or both halves: +1, 0 or -1.
    vocab = tb.build_vocab(DOC_CORPUS.split("\n"))
    merges, _ = tb.learn_bpe(vocab, 100)
    sizes = [len(tb.build_dict_from_vocab(vocab))]
    for pair in merges:
        vocab = tb.merge_vocab(pair, vocab)
        sizes.append(len(tb.build_dict_from_vocab(vocab)))
    changes = [b - a for a, b in zip(sizes, sizes[1:])]
    assert set(changes) == {1, 0, -1}


# -- the 100-merge run and the top-20 table --------------------------------------------------------


def test_build_vocab_splits_words_with_end_of_word():
    vocab = tb.build_vocab(DOC_CORPUS.split("\n"))
    assert list(vocab.items())[:2] == [("O b j e c t </w>", 2), ("r a s p b e r r y p i </w>", 10)]
    assert tb.build_vocab(DOC_CORPUS) == vocab  # one text or its lines: the same words
    assert sum(vocab.values()) == len(DOC_CORPUS.split())


def test_hundred_merges_print_the_documents_vocab(capsys):
    _, vocab = tb.learn_bpe(tb.build_vocab(DOC_CORPUS.split("\n")), 100)
    print(vocab)
    assert capsys.readouterr().out == PRINTED_VOCAB + "\n"


def test_hundred_merges_native_equals_per_step_and_reference():
    vocab = tb.build_vocab(DOC_CORPUS.split("\n"))
    merges, final = tb.learn_bpe(vocab, 100)
    assert per_step(vocab, 100) == (merges, final)
    assert reference_run(vocab, 100) == (merges, final)


def test_top_twenty_table(capsys):
    _, vocab = tb.learn_bpe(tb.build_vocab(DOC_CORPUS.split("\n")), 100)
    print(tb.format_top_subwords(tb.build_dict_from_vocab(vocab), 20))
    assert capsys.readouterr().out == PRINTED_TOP_20


# -- encoding and decoding ------------------------------------------------------------------------


def test_tokenize_example(capsys):
    print(tb.tokenize(ENCODE_SENTENCE, ENCODE_DICT))
    assert capsys.readouterr().out == PRINTED_TOKENS


def test_detokenize_example(capsys):
    print(tb.detokenize(tb.tokenize(ENCODE_SENTENCE, ENCODE_DICT)))
    assert capsys.readouterr().out == PRINTED_TEXT  # the trailing space included


def test_subword_tokenize_one_word():
    assert tb.subword_tokenize("largest", ENCODE_DICT) == ["l", "a", "r", "g", "est</w>"]
    assert tb.subword_tokenize("好", ENCODE_DICT) == ["<unk>"]
    assert tb.subword_tokenize("好", ENCODE_DICT, unk="[UNK]") == ["[UNK]"]


def test_substring_encoder_prose_example():
    # The prose example: tokens tried in the listed order, gaps split by the tokens after them.
    # The document prints "largest</w>" -> ["<unk>", "est"]: its own rule gives "est</w>" (a typo).
    tokens = ["err</w>", "tain</w>", "moun", "est</w>", "high", "the</w>", "a</w>"]
    expected = {
        "the</w>": ["the</w>"],
        "highest</w>": ["high", "est</w>"],
        "mountain</w>": ["moun", "tain</w>"],
        "largest</w>": ["<unk>", "est</w>"],
    }
    for word, split in expected.items():
        assert tb.tokenize_word_by_substrings(word, tokens) == split


def test_sort_by_length_is_longest_first_and_stable():
    ordered = tb.sort_by_length(["a", "high", "est</w>", "moun", "tain</w>"])
    assert ordered == ["tain</w>", "est</w>", "high", "moun", "a"]


def test_empty_subword_dictionary_is_an_error():
    with pytest.raises(InvalidInputError, match="empty"):
        tb.tokenize("low", {})
    with pytest.raises(InvalidInputError, match="empty"):
        tb.subword_tokenize("low", {"": 1})


def test_bad_num_merges_is_an_error():
    with pytest.raises(InvalidInputError, match="num_merges"):
        tb.learn_bpe(LOW_EXAMPLE, -1)


# -- the per-step functions -----------------------------------------------------------------------


def test_get_stats_counts_pairs_in_first_seen_order():
    stats = tb.get_stats({"b a </w>": 1, "a b a </w>": 2})
    assert list(stats.items()) == [(("b", "a"), 3), (("a", "</w>"), 3), (("a", "b"), 2)]


def test_merge_vocab_merges_whole_symbols_left_to_right():
    assert tb.merge_vocab(("a", "a"), {"a a a </w>": 1}) == {"aa a </w>": 1}
    assert tb.merge_vocab(("a", "a"), {"a a a a </w>": 1}) == {"aa aa </w>": 1}
    # "low e r" holds the text "w e" but no symbol "w" before a symbol "e".
    assert tb.merge_vocab(("w", "e"), {"low e r </w>": 2}) == {"low e r </w>": 2}
    assert tb.merge_vocab(("s", "t"), {"e st </w>": 1}) == {"e st </w>": 1}


def test_partly_merged_vocabulary_continues_step_by_step():
    vocab = tb.build_vocab(DOC_CORPUS.split("\n"))
    merges, final = tb.learn_bpe(vocab, 60)
    _, halfway = tb.learn_bpe(vocab, 25)
    rest, final2 = tb.learn_bpe(halfway, 35)
    assert merges[25:] == rest and final2 == final


def test_lone_surrogates_stay_symbols_as_in_the_per_step_functions():
    # The core reads a lone surrogate as U+FFFD; such a vocabulary is learned step by step.
    vocab = tb.build_vocab(["a\ud800 a\ud800 b"])
    merges, final = tb.learn_bpe(vocab, 3)
    assert merges[0] == ("a", "\ud800") and final == {"a\ud800</w>": 2, "b</w>": 1}


# -- the native merge loop against the per-step functions and the reference ------------------------

SYMBOLS = st.sampled_from(list("aabbbc<>/wé字") + ["😀"])
WORDS = st.text(SYMBOLS, min_size=1, max_size=8)
CORPORA = st.dictionaries(WORDS, st.integers(1, 6), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(CORPORA, st.integers(0, 40))
def test_native_equals_per_step_and_reference(counts, num_merges):
    vocab = {" ".join(w) + " </w>": n for w, n in counts.items()}
    native = tb.learn_bpe(vocab, num_merges)
    assert per_step(vocab, num_merges) == native
    assert reference_run(vocab, num_merges) == native


def test_native_equals_per_step_on_real_text():
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 12_000)
    vocab = tb.build_vocab(text.split("\n"))
    native = tb.learn_bpe(vocab, 200)
    assert len(native[0]) == 200
    assert per_step(vocab, 200) == native
    assert reference_run(vocab, 200) == native


@pytest.mark.slow
def test_native_equals_reference_on_whole_corpus():
    text = shared("corpora", "en", "tinyshakespeare.txt").read_text(encoding="utf-8")
    vocab = tb.build_vocab(text.split("\n"))
    assert reference_run(vocab, 300) == tb.learn_bpe(vocab, 300)


# -- the encoders against their references -------------------------------------------------------

PIECES = st.text(st.sampled_from(list("ab<>/w")), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab<>/wz")), min_size=1, max_size=9), max_size=5),
       st.sets(PIECES | st.just("</w>") | PIECES.map(lambda s: s + "</w>"), min_size=1, max_size=12))
def test_greedy_encoder_equals_reference(words: List[str], subwords):
    subword_dict = dict.fromkeys(subwords, 1)
    tokens = tb.tokenize(" ".join(words), subword_dict)
    assert tokens == [t for w in words for t in greedy_split(w, subword_dict, "<unk>")]


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("ab<>/w")), max_size=12),
       st.lists(PIECES | PIECES.map(lambda s: s + "</w>"), max_size=8))
def test_substring_encoder_equals_reference(word, tokens):
    assert tb.tokenize_word_by_substrings(word, tokens) == split_by_substrings(word, tokens, "<unk>")
