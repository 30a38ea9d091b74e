"""The WordPiece, WordLevel and CharLevel decoders against Hugging Face's decoders."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ciyuan import decoders

tokenizers = __import__("pytest").importorskip("tokenizers")

# Tokens built from the pieces the clean-up rules look at, so the rules actually fire.
_piece = st.sampled_from(["##", "#", ".", "?", "!", ",", "'", " ", "n't", "'m", "do", "not", "'s", "'ve",
                          "'re", "a", "b", "词", "é", "##a", "do not", " do not"])
_token = st.lists(_piece, min_size=0, max_size=4).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(_token, max_size=12), st.booleans(), st.sampled_from(["##", "@@", "#"]))
def test_wordpiece_decoder_matches_hugging_face(tokens, cleanup, prefix):
    ours = decoders.WordPiece(prefix, cleanup).decode([t.encode() for t in tokens])
    theirs = tokenizers.decoders.WordPiece(prefix=prefix, cleanup=cleanup).decode(tokens)
    assert ours == theirs


def test_wordpiece_decoder_examples():
    d = decoders.WordPiece()
    assert d.decode([b"i", b"do", b"not", b"like", b"it", b"."]) == "i do not like it."
    assert d.decode([b"un", b"##believ", b"##able", b"!"]) == "unbelievable!"
    assert d.decode([b"##a", b"b"]) == "##a b"  # the first token keeps its prefix
    assert d.decode([]) == ""


def test_round_trip_through_dict():
    for d in (decoders.WordPiece("@@", False), decoders.WordLevel(), decoders.CharLevel()):
        again = decoders.from_dict(d.to_dict())
        assert type(again) is type(d) and again.to_dict() == d.to_dict()
