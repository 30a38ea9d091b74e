"""Document 004's BPE run (each merge printed), its note on the SentencePiece-style merge loop
(a heap and incremental counts: what ciyuan's native trainer does) and its BBPE pipeline."""

from __future__ import annotations

from collections import Counter

from ciyuan.reference.bpe_train import train_bpe
from ciyuan.reference.merge_table import apply_merge_table, segment, train_merge_table
from ciyuan.textbook import BBPE, bpe, build_vocab, get_stats, learn_bpe, merge_vocab, run_bpe
from ciyuan.textbook.merge_table import learn_merges
from ciyuan.trainers import BpeTrainer
from tests.conftest import read_prefix, shared

CORPUS = ["low", "lower", "newest", "widest"]

# What the document prints; its output stops in the middle of the "Merge 9" line.
PRINTED_PREFIX = (
    'Initial vocab: '
    "Counter({'l o w </w>': 1, 'l o w e r </w>': 1, 'n e w e s t </w>': 1, 'w i d e s t </w>': 1})\n"
    "Merge 1: ('l', 'o'), vocab: "
    "{'lo w </w>': 1, 'lo w e r </w>': 1, 'n e w e s t </w>': 1, 'w i d e s t </w>': 1}\n"
    "Merge 2: ('lo', 'w'), vocab: "
    "{'low </w>': 1, 'low e r </w>': 1, 'n e w e s t </w>': 1, 'w i d e s t </w>': 1}\n"
    "Merge 3: ('e', 's'), vocab: "
    "{'low </w>': 1, 'low e r </w>': 1, 'n e w es t </w>': 1, 'w i d es t </w>': 1}\n"
    "Merge 4: ('es', 't'), vocab: "
    "{'low </w>': 1, 'low e r </w>': 1, 'n e w est </w>': 1, 'w i d est </w>': 1}\n"
    "Merge 5: ('est', '</w>'), vocab: "
    "{'low </w>': 1, 'low e r </w>': 1, 'n e w est</w>': 1, 'w i d est</w>': 1}\n"
    "Merge 6: ('low', '</w>'), vocab: "
    "{'low</w>': 1, 'low e r </w>': 1, 'n e w est</w>': 1, 'w i d est</w>': 1}\n"
    "Merge 7: ('low', 'e'), vocab: "
    "{'low</w>': 1, 'lowe r </w>': 1, 'n e w est</w>': 1, 'w i d est</w>': 1}\n"
    "Merge 8: ('lowe', 'r'), vocab: "
    "{'low</w>': 1, 'lower </w>': 1, 'n e w est</w>': 1, 'w i d est</w>': 1}\n"
    "Merge 9: ('lower', '</w>'), vocab: "
    '{'
)


def expected_run(words, num_merges):
    """The run's printed text from the reference trainer, the merges applied in order."""
    counts = dict(Counter(words))
    _, merges = train_bpe(counts, max_merges=num_merges, end_of_word_symbol="</w>", tie_break="first")
    lines = ["Initial vocab: " + repr(Counter({" ".join(w) + " </w>": n for w, n in counts.items()}))]
    vocab = {}
    for i in range(1, len(merges) + 1):
        vocab = {" ".join(apply_merge_table([*w, "</w>"], merges[:i])): n for w, n in counts.items()}
        lines.append(f"Merge {i}: {merges[i - 1]}, vocab: {vocab}")
    lines.append(f"Final vocab: {vocab}")
    return "\n".join(lines) + "\n"


def text_replacing_run(vocab, num_merges):
    """The run with the document's merge step, a plain text replacement of "left right" (which
    can join symbols across a boundary): the vocabulary after each merge."""
    states = []
    for _ in range(num_merges):
        stats = get_stats(vocab)
        best = max(stats, key=stats.__getitem__)
        vocab = {w.replace(" ".join(best), "".join(best)): n for w, n in vocab.items()}
        states.append((best, vocab))
    return states


def test_bpe_run_prints_the_documents_merges(capsys):
    final = run_bpe(CORPUS, 10)
    out = capsys.readouterr().out
    assert out.startswith(PRINTED_PREFIX)
    assert out == expected_run(CORPUS, 10)
    assert out.splitlines()[9] == "Merge 9: ('lower', '</w>'), vocab: {'low</w>': 1, 'lower</w>': 1, " \
                                  "'n e w est</w>': 1, 'w i d est</w>': 1}"
    assert out.splitlines()[-1] == f"Final vocab: {final}"


def test_bpe_without_printing_gives_the_same_vocab(capsys):
    vocab = build_vocab(CORPUS)
    quiet = bpe(vocab, 10, verbose=False)
    assert capsys.readouterr().out == ""
    assert quiet == bpe(vocab, 10)
    assert bpe(vocab, 0, verbose=False) is vocab  # no merge: the vocabulary itself, as the document returns


def test_text_replacement_joins_across_symbols_but_not_in_the_example():
    # The document merges by replacing the text "w e": in "low e r" that joins "low" and "e".
    assert "low e r </w>".replace("w e", "we") == "lowe r </w>"
    assert merge_vocab(("w", "e"), {"low e r </w>": 1}) == {"low e r </w>": 1}
    # In the worked example no merge meets such a boundary: the printed run is the same.
    vocab = build_vocab(CORPUS)
    states = []
    for i in range(1, 11):
        merges, after = learn_bpe(vocab, i)
        states.append((merges[-1], after))
    assert text_replacing_run(vocab, 10) == states


def test_text_replacement_differs_on_other_corpora():
    # After (l, o), (lo, w), (low, </w>), (e, </w>), the pair (w, e</w>) of "we" is merged; as
    # text, "w e</w>" is also found in "low e</w>", where no symbol "w" precedes "e</w>".
    vocab = build_vocab(["lowe"] + ["low"] * 10 + ["we"] * 3)
    states = text_replacing_run(vocab, 5)
    merges, whole = learn_bpe(vocab, 5)
    assert [pair for pair, _ in states] == merges and merges[-1] == ("w", "e</w>")
    assert list(whole) == ["low e</w>", "low</w>", "we</w>"]
    assert list(states[-1][1]) == ["lowe</w>", "low</w>", "we</w>"]


def test_heap_and_incremental_counts_equal_a_full_recount():
    # The SentencePiece-style speed-up (a priority queue of pair counts, only the pairs around
    # each merge updated) is ciyuan's native merge loop; it must give what a full recount of
    # every pair per merge gives.
    text = read_prefix(shared("corpora", "en", "tinyshakespeare.txt"), 16_000)
    words = dict(Counter(text.split()))
    trainer = BpeTrainer(0, max_merges=400, end_of_word_symbol="</w>", tie_break="first")
    _, merges = learn_merges(trainer, words)
    _, recount = train_bpe(words, max_merges=400, end_of_word_symbol="</w>", tie_break="first")
    assert [(a.decode(), b.decode()) for a, b in merges] == recount
    assert learn_bpe(build_vocab(text.split("\n")), 400)[0] == recount


def test_bbpe_text_to_bytes_to_merges_to_ids():
    bbpe = BBPE(vocab_size=257 + 3).train(["héllo héllo"])
    # text -> UTF-8 bytes
    assert bbpe.split("hé") == [b"h", b"\xc3", b"\xa9", b"</w>"]
    # -> BPE merges (é is two bytes; the first merges join them)
    assert bbpe.merge_table.merges == [(b"h", b"\xc3"), (b"h\xc3", b"\xa9"), (b"h\xc3\xa9", b"l")]
    assert bbpe.tokenize("hé") == ["hé".encode(), b"</w>"]
    # -> subword ids, and back
    ids = bbpe.encode("hé")
    assert ids == [bbpe.vocab["hé".encode()], bbpe.vocab[b"</w>"]]
    assert bbpe.decode(ids) == "hé"
    tokens, merges = train_merge_table(["héllo héllo"], vocab_size=260, byte_level=True)
    assert bbpe.merge_table.merges == merges and segment("hé", merges, byte_level=True) == bbpe.tokenize("hé")
