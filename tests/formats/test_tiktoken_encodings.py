"""Named tiktoken encodings: the table, recognising files by content, and the errors."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import Tokenizer
from ciyuan.cli import main
from ciyuan.errors import InvalidInputError, ModelError
from ciyuan.formats.tiktoken import looks_like_tiktoken, resolve_pattern
from ciyuan.formats.tiktoken_encodings import (
    ENCODING_NAMES,
    ENCODINGS,
    LLAMA3_PATTERN,
    LLAMA3_SPECIAL_TOKENS,
    identify_tiktoken,
    identify_tiktoken_bytes,
)
from tests.conftest import read_prefix, shared


def test_llama3_special_tokens():
    ids = sorted(LLAMA3_SPECIAL_TOKENS.values())
    assert ids == list(range(128000, 128256))
    assert LLAMA3_SPECIAL_TOKENS["<|begin_of_text|>"] == 128000
    assert LLAMA3_SPECIAL_TOKENS["<|end_of_text|>"] == 128001
    assert LLAMA3_SPECIAL_TOKENS["<|reserved_special_token_0|>"] == 128002
    assert LLAMA3_SPECIAL_TOKENS["<|reserved_special_token_3|>"] == 128005
    assert LLAMA3_SPECIAL_TOKENS["<|start_header_id|>"] == 128006
    assert LLAMA3_SPECIAL_TOKENS["<|end_header_id|>"] == 128007
    assert LLAMA3_SPECIAL_TOKENS["<|reserved_special_token_4|>"] == 128008
    assert LLAMA3_SPECIAL_TOKENS["<|eot_id|>"] == 128009
    assert LLAMA3_SPECIAL_TOKENS["<|reserved_special_token_5|>"] == 128010
    assert LLAMA3_SPECIAL_TOKENS["<|reserved_special_token_250|>"] == 128255
    assert ENCODINGS["llama3"].n_ranks == 128000


def test_hashes_are_tiktokens():
    # tiktoken's expected_hash of each file it would download (calling its constructors would
    # download them: only the source is read).
    import inspect

    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    source = inspect.getsource(openai_public)
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        assert f'expected_hash="{ENCODINGS[name].sha256}"' in source, name
    assert "ENDOFTEXT: 50256" in source and "ENDOFTEXT: 199999, ENDOFPROMPT: 200018" in source


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_identify_shared_files(name):
    path = shared("tokenizers", "tiktoken", f"{name}.tiktoken")
    assert identify_tiktoken(path) == name
    assert looks_like_tiktoken(path)
    data = path.read_bytes()
    # One changed byte, or one line less: not the official file.
    assert identify_tiktoken_bytes(data[:-2] + b"6\n") is None
    assert identify_tiktoken_bytes(data[: data.rfind(b"\n", 0, -1) + 1]) is None


def test_r50k_is_gpt2_files_as_ranks(tmp_path):
    # GPT-2's encoder.json + vocab.bpe written as a .tiktoken file is r50k_base's official file.
    load = pytest.importorskip("tiktoken.load")
    ranks = load.data_gym_to_mergeable_bpe_ranks(str(shared("tokenizers", "gpt2", "vocab.bpe")),
                                                 str(shared("tokenizers", "gpt2", "encoder.json")))
    path = tmp_path / "r50k_base.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(),
                                                                                      key=lambda x: x[1])))
    assert identify_tiktoken(path) == "r50k_base"
    tok = Tokenizer.from_tiktoken(path)
    assert tok.encode("hello world <|endoftext|>", allowed_special="all").ids == [31373, 995, 220, 50256]


def test_unknown_file_needs_a_pattern(tmp_path):
    path = tmp_path / "mine.tiktoken"
    path.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    assert identify_tiktoken(path) is None
    with pytest.raises(InvalidInputError) as e:
        Tokenizer.from_tiktoken(path)
    for name in ENCODING_NAMES:
        assert name in str(e.value)
    tok = Tokenizer.from_tiktoken(path, "cl100k_base", special_tokens={})
    assert tok.encode("ab").ids == [97, 98]
    tok = Tokenizer.from_tiktoken(path, r"\S+|\s+")
    assert tok.encode("a b").ids == [97, 32, 98] and tok.special_tokens == {}


def test_bad_patterns():
    with pytest.raises(InvalidInputError, match="unknown encoding name 'llama4'"):
        resolve_pattern("llama4")
    with pytest.raises(InvalidInputError, match="neither a known encoding name .* nor a valid regular expression"):
        resolve_pattern("(?<")
    assert resolve_pattern("llama3") == ("llama3", "llama3")
    # Meta's tokenizer.py spelling, character for character.
    assert LLAMA3_PATTERN == (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"
                              r"[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
    assert resolve_pattern(r"\w+|\W+") == (r"\w+|\W+", None)


def test_collision_says_what_to_pass():
    path = shared("tokenizers", "tiktoken", "o200k_base.tiktoken")
    with pytest.raises(ModelError) as e:
        Tokenizer.from_tiktoken(path, "cl100k_base")
    message = str(e.value)
    assert "special_tokens={}" in message and "100257" in message and "o200k_base" in message
    with pytest.raises(ModelError, match="special_tokens=\\{\\}"):
        Tokenizer.from_tiktoken(path, special_tokens={"<|x|>": 5})
    tok = Tokenizer.from_tiktoken(path, "cl100k_base", special_tokens={})
    assert tok.special_tokens == {}


def test_cli_encode_recognises_the_file(tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    path = shared("tokenizers", "tiktoken", "o200k_base.tiktoken")
    src, out = tmp_path / "in.txt", tmp_path / "ids.txt"
    src.write_text("Hello world, 词元!\n", encoding="utf-8")
    assert main(["encode", "-t", str(path), str(src), "-o", str(out)]) == 0
    from tiktoken.load import load_tiktoken_bpe

    from ciyuan.pre_tokenizers.patterns import O200K_PATTERN

    enc = tiktoken.Encoding("o200k_base", pat_str=O200K_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens={})
    assert out.read_text().split("\n")[0] == " ".join(map(str, enc.encode_ordinary("Hello world, 词元!")))


@pytest.fixture(scope="module")
def llama3_pair():
    """Llama 3's pattern and special tokens over cl100k's ranks (Llama 3's own file is not in the
    shared data), in ciyuan and in tiktoken as Meta's tokenizer.py builds it."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    path = shared("tokenizers", "tiktoken", "cl100k_base.tiktoken")
    enc = tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=load_tiktoken_bpe(str(path)),
                            special_tokens=LLAMA3_SPECIAL_TOKENS)
    return Tokenizer.from_tiktoken(path, "llama3"), enc


def test_llama3_pattern_and_specials(llama3_pair):
    tok, enc = llama3_pair
    assert tok.pre_tokenizer.native_pattern == "llama3"  # the native scanner
    lines = read_prefix(shared("corpora", "en", "taylorswift.txt"), 60_000).split("\n")
    lines += ["a\n\n ", "x \n ", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"]
    for line in lines:
        assert tok.encode(line, allowed_special="all").ids == enc.encode(line, allowed_special="all"), line


@given(st.text(max_size=60))
@settings(max_examples=60, deadline=None)
def test_llama3_hypothesis(llama3_pair, text):
    tok, enc = llama3_pair
    assert tok.encode(text, disallowed_special=()).ids == enc.encode_ordinary(text)
