"""Added tokens (Hugging Face's AddedToken and its flags) held against `tokenizers` itself:
ids, tokens, offsets and decoded text, on chosen cases and on hypothesis-generated text."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.errors import ModelError
from ciyuan.models import WordLevel
from ciyuan.normalizers import Lowercase
from ciyuan.pre_tokenizers import WhitespaceSplit
from ciyuan.special_tokens import AddedToken, added_tokens_from_list, find_added

tokenizers = pytest.importorskip("tokenizers")

VOCAB = {"[UNK]": 0, "a": 1, "b": 2, "hello": 3, "world": 4, "ab": 5}

# (content, single_word, lstrip, rstrip, normalized, special)
Spec = Tuple[str, bool, bool, bool, bool, bool]


def build(specs: Sequence[Spec], lowercase: bool) -> Tuple[Any, Tokenizer]:
    """The same WordLevel tokenizer in `tokenizers` and in ciyuan, with the same added tokens
    added one by one in the same order."""
    from tokenizers import AddedToken as HfAdded
    from tokenizers import normalizers, pre_tokenizers
    from tokenizers.models import WordLevel as HfWordLevel

    hf = tokenizers.Tokenizer(HfWordLevel(VOCAB, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if lowercase:
        hf.normalizer = normalizers.Lowercase()
    ours = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"), pre_tokenizer=WhitespaceSplit(),
                     normalizer=Lowercase() if lowercase else None)
    for content, single_word, lstrip, rstrip, normalized, special in specs:
        flags = dict(single_word=single_word, lstrip=lstrip, rstrip=rstrip, normalized=normalized)
        if special:
            hf.add_special_tokens([HfAdded(content, special=True, **flags)])
            ours.add_special_tokens([AddedToken(content, special=True, **flags)])
        else:
            hf.add_tokens([HfAdded(content, **flags)])
            ours.add_tokens([AddedToken(content, **flags)])
    return hf, ours


def assert_same(hf: Any, ours: Tokenizer, text: str) -> None:
    want, got = hf.encode(text), ours.encode(text)
    assert got.ids == want.ids, text
    assert got.tokens == want.tokens, text
    assert got.offsets == want.offsets, text
    for skip in (False, True):
        assert ours.decode(got.ids, skip_special_tokens=skip) == hf.decode(want.ids, skip_special_tokens=skip)


CASES: List[Tuple[List[Spec], bool, List[str]]] = [
    # a special token that takes the spaces around it (RoBERTa's <mask>)
    ([("<mask>", False, True, True, False, True)], False, ["a <mask>  b", "<mask><mask>", "  <mask>", "ab<mask>b"]),
    # single words only, on normalized text
    ([("Hel", True, False, False, True, False)], True, ["Hel hello HEL", "HEL", "xhel hel_ hel."]),
    # a token with a space inside, and a special one beside it
    ([("x y", False, False, False, True, False), ("<M>", False, True, False, False, True)], True,
     ["ax yb  X Y <M>", "<M><M>x y", "x  y"]),
    # plain tokens (the native path), one of them already in the vocabulary
    ([("hello", False, False, False, False, False), ("[SEP]", False, False, False, False, True)], False,
     ["hello[SEP]world", "[SEP]", "ahellob [SEP] [SEP]"]),
    # mixed: normalized and not, no normalizer (Hugging Face's two passes)
    ([("ab", False, False, False, True, False), ("bc", False, False, True, False, False)], False,
     ["abc", "abcab bc  a", "bcab"]),
]


@pytest.mark.parametrize("specs, lowercase, texts", CASES)
def test_added_tokens_match_tokenizers(specs: List[Spec], lowercase: bool, texts: List[str]) -> None:
    hf, ours = build(specs, lowercase)
    for text in texts:
        assert_same(hf, ours, text)
    assert ours.get_vocab() == hf.get_vocab()
    assert ours.vocab_size == hf.get_vocab_size()


_SPEC = st.tuples(st.sampled_from(["<m>", "a b", "ab", "Hel", "[S]", "x"]), st.booleans(), st.booleans(),
                  st.booleans(), st.booleans(), st.booleans())


@settings(max_examples=150, deadline=None)
@given(specs=st.lists(_SPEC, min_size=1, max_size=4, unique_by=lambda s: s[0]), lowercase=st.booleans(),
       text=st.text(st.sampled_from(list("abHelx<m>[S] \t_é")), max_size=30))
def test_added_tokens_hypothesis(specs: List[Spec], lowercase: bool, text: str) -> None:
    hf, ours = build(specs, lowercase)
    assert_same(hf, ours, text)


def test_added_tokens_stay_native() -> None:
    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"), pre_tokenizer=WhitespaceSplit())
    tok.add_special_tokens(["<s>"])
    tok.add_tokens([AddedToken("zz", normalized=False)])
    assert tok._native_path
    assert tok.encode("a<s>zz b").ids == [1, 6, 7, 2]
    # A flag: Hugging Face's rules, in the native encoder's added-token passes.
    tok.add_tokens([AddedToken("<x>", lstrip=True)])
    assert tok._native_path
    assert tok.encode("a  <x>b").ids == [1, 8, 2]
    assert tok.encode("a  <x>b").tokens == ["a", "  <x>", "b"]


def test_added_tokens_survive_ciyuan_json(tmp_path: Any) -> None:
    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"), pre_tokenizer=WhitespaceSplit(), normalizer=Lowercase())
    tok.add_tokens([AddedToken("Hel", single_word=True)])
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True)])
    tok.save(tmp_path / "t.json")
    back = Tokenizer.from_file(tmp_path / "t.json")
    assert back.added_tokens == tok.added_tokens
    assert back.encode("hel  <mask>").ids == tok.encode("hel  <mask>").ids == [6, 7]


def test_add_tokens_counts_and_ids() -> None:
    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"))
    assert tok.add_tokens(["hello", "new", "new"]) == 2  # "hello" keeps its id 3
    assert tok.token_to_id("hello") == 3 and tok.token_to_id("new") == 6
    with pytest.raises(Exception, match="non-empty"):
        tok.add_tokens([""])


def test_find_added_rules() -> None:
    import regex

    tokens = {"<m>": (9, AddedToken("<m>", lstrip=True, rstrip=True))}
    assert find_added("a <m> <m> b", regex.compile("<m>"), tokens) == [(0, 1, None), (1, 6, 9), (6, 10, 9),
                                                                        (10, 11, None)]


@pytest.mark.parametrize("items, message", [
    ([{"id": -1, "content": "x"}], "integer id"),
    ([{"id": 1, "content": ""}], "non-empty"),
    ([{"id": 1, "content": "x", "lstrip": "yes"}], "true or false"),
    ([{"id": 1, "content": "x"}, {"id": 1, "content": "y"}], "share the id"),
    (["x"], "must be an object"),
])
def test_added_tokens_from_list_errors(items: List[Any], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        added_tokens_from_list(items)


def test_added_tokens_accepted_in_allowed_special() -> None:
    """Code written for tiktoken passes allowed_special={"<|endoftext|>"}; on a tokenizer whose
    <|endoftext|> is an added token (a tokenizer.json's) that is accepted and changes nothing."""
    tok = Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"), pre_tokenizer=WhitespaceSplit())
    tok.add_special_tokens(["<|endoftext|>"])
    want = tok.encode("a<|endoftext|>").ids
    assert tok.encode("a<|endoftext|>", allowed_special={"<|endoftext|>"}).ids == want
    assert tok.encode("a<|endoftext|>", disallowed_special=()).ids == want
    with pytest.raises(Exception, match="not special tokens"):
        tok.encode("a", allowed_special={"<nope>"})
