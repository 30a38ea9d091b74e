"""BERT's ``vocab.txt`` as a whole tokenizer: the pipeline Hugging Face's
``BertWordPieceTokenizer`` builds around it. The file itself is read and written by
:mod:`ciyuan.models.vocab_txt` (the WordPiece model's own file; its functions are re-exported
here).

Example:
    >>> from ciyuan import Tokenizer
    >>> bert = Tokenizer(**bert_vocab_parts("bert-base-uncased-vocab.txt"))   # doctest: +SKIP
"""

from __future__ import annotations

from typing import Optional

from ciyuan._io import PathLike
from ciyuan.decoders import WordPiece as WordPieceDecoder
from ciyuan.errors import FileFormatError
from ciyuan.formats.parts import TokenizerParts
from ciyuan.models import WordPiece
from ciyuan.models.vocab_txt import load_bert_vocab, parse_bert_vocab, save_bert_vocab
from ciyuan.normalizers import BertNormalizer
from ciyuan.pre_tokenizers import BertPreTokenizer
from ciyuan.processors import BertProcessing

__all__ = ["bert_vocab_parts", "load_bert_vocab", "save_bert_vocab", "parse_bert_vocab"]


def bert_vocab_parts(
    path: PathLike,
    lowercase: bool = True,
    *,
    strip_accents: Optional[bool] = None,
    clean_text: bool = True,
    handle_chinese_chars: bool = True,
    unk_token: str = "[UNK]",
    sep_token: str = "[SEP]",
    cls_token: str = "[CLS]",
    pad_token: str = "[PAD]",
    mask_token: str = "[MASK]",
    wordpieces_prefix: str = "##",
    max_input_chars_per_word: int = 100,
) -> TokenizerParts:
    """The parts of the whole BERT pipeline from a ``vocab.txt``, as Hugging Face's
    ``BertWordPieceTokenizer`` builds it (``Tokenizer.from_bert_vocab`` builds the tokenizer).

    Args:
        path: the ``vocab.txt``.
        lowercase: lowercase the text (True for uncased vocabularies).
        strip_accents: strip accents; None follows ``lowercase``.
        clean_text, handle_chinese_chars: :class:`~ciyuan.normalizers.BertNormalizer`'s options.
        unk_token, sep_token, cls_token, pad_token, mask_token: the special tokens (those the
            vocabulary holds become special tokens; it must hold ``sep_token`` and ``cls_token``).
        wordpieces_prefix: the prefix of pieces that continue a word.
        max_input_chars_per_word: longer words become ``unk_token``.

    Raises:
        FileFormatError: the file cannot be read, or it lacks ``sep_token`` or ``cls_token``.
    """
    model = WordPiece.from_file(path, unk_token=unk_token, continuing_subword_prefix=wordpieces_prefix,
                                max_input_chars_per_word=max_input_chars_per_word)
    specials = {t: token_id for t in (pad_token, unk_token, cls_token, sep_token, mask_token)
                if (token_id := model.token_to_id(t)) is not None}
    for name, token in (("sep_token", sep_token), ("cls_token", cls_token)):
        if token not in specials:
            raise FileFormatError(str(path), None, f"the vocabulary has no {token!r} ({name})")
    return TokenizerParts(
        model=model,
        normalizer=BertNormalizer(clean_text=clean_text, handle_chinese_chars=handle_chinese_chars,
                                  strip_accents=strip_accents, lowercase=lowercase),
        pre_tokenizer=BertPreTokenizer(),
        post_processor=BertProcessing(sep=(sep_token, specials[sep_token]), cls=(cls_token, specials[cls_token])),
        decoder=WordPieceDecoder(wordpieces_prefix),
        special_tokens=specials,
    )
