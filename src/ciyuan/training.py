"""Training a tokenizer: a trainer learns the model, and the pipeline around it is chosen here.

:meth:`Tokenizer.train <ciyuan.tokenizer.Tokenizer.train>` (a new tokenizer) and
:meth:`Tokenizer.train_model <ciyuan.tokenizer.Tokenizer.train_model>` (a new model in an
existing tokenizer) both land here. The steps:

1. the stages the words are cut by: the caller's, else the tokenizer's own (``train_model``),
   else the trainer's :meth:`~ciyuan.trainers.Trainer.default_pipeline`;
2. ``trainer.train(source, pre_tokenizer, normalizer)`` counts the words and learns the model;
3. the trainer's lowercasing becomes a ``Lowercase`` normalizer (unless BERT's normalizer,
   which lowercases itself, is there), the special tokens the model holds become the
   tokenizer's, and a BERT-style trainer with ``[CLS]`` and ``[SEP]`` gets ``[CLS] A [SEP]``
   post-processing when there is none.

This module sits just below the tokenizer in the import layers: it builds stages of every
package, and is handed the tokenizer class or object rather than importing
``ciyuan.tokenizer`` (which calls it).

Example:
    >>> from ciyuan import Tokenizer
    >>> from ciyuan.trainers import BpeTrainer
    >>> tok = Tokenizer.train(["low lower newest"] * 5, BpeTrainer(300, byte_level=True))
    >>> tok.pre_tokenizer.pattern
    'gpt2'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Tuple, Type, TypeVar

from ciyuan import normalizers, pre_tokenizers
from ciyuan.normalizers import BertNormalizer
from ciyuan.trainers import BpeTrainer, Pipeline, Trainer
from ciyuan.trainers.corpus import TrainingSource, WordCounts

if TYPE_CHECKING:
    from ciyuan.decoders import Decoder
    from ciyuan.normalizers import Normalizer
    from ciyuan.processors import PostProcessor
    from ciyuan.tokenizer import Tokenizer

__all__ = ["default_pipeline", "train_tokenizer", "train_model", "Counter"]

Tok = TypeVar("Tok", bound="Tokenizer")

#: Another way to count the words (``count(source, trainer, pre_tokenizer, normalizer, errors)``),
#: such as the Ray engine's (:mod:`ciyuan.datasets.ray_engine`), which sits above this layer and
#: so hands its counter down. It must give exactly what ``trainer.count_words`` gives.
Counter = Callable[[TrainingSource, Trainer, Any, Optional["Normalizer"], str], WordCounts]

#: ``pre_tokenizer="default"``: the stages are chosen by the trainer (or the tokenizer).
DEFAULT = "default"


def default_pipeline(trainer: Trainer, with_normalizer: bool = True) -> Tuple[Optional["Normalizer"], Any]:
    """(normalizer, pre-tokenizer) a new tokenizer trained by ``trainer`` uses by default
    (``with_normalizer=False``: the caller has its own, and SentencePiece's, costly to build,
    is not made)."""
    kind = trainer.default_pipeline()
    if kind is Pipeline.BERT:  # BERT's: clean-up, CJK characters apart, punctuation apart
        return BertNormalizer(lowercase=trainer.lowercase), pre_tokenizers.BertPreTokenizer()
    if kind is Pipeline.LINES:
        return None, None
    if kind is Pipeline.SENTENCEPIECE:  # the normalizer cuts the words; none before it is merged
        spm_normalizer = getattr(normalizers, "SentencePieceNormalizer", None)
        if spm_normalizer is None or not with_normalizer:
            return None, None
        options = {name: getattr(trainer, name) for name in ("treat_whitespace_as_suffix", "user_defined_symbols")
                   if hasattr(trainer, name)}
        return spm_normalizer(**options), None
    if kind is Pipeline.BYTES:
        return None, pre_tokenizers.Split("gpt2")
    return None, pre_tokenizers.WordPunct()


def train_tokenizer(cls: Type[Tok], source: TrainingSource, trainer: Optional[Trainer] = None, *,
                    pre_tokenizer: Any = DEFAULT, normalizer: Optional["Normalizer"] = None,
                    decoder: Optional["Decoder"] = None, errors: str = "strict",
                    count: Optional[Counter] = None) -> Tok:
    """A new ``cls`` with a model ``trainer`` learns from ``source`` (see :meth:`Tokenizer.train`);
    ``count``: the words are counted by it instead of ``trainer.count_words`` (see :data:`Counter`)."""
    trainer = _checked(trainer)
    if _is_default(pre_tokenizer):
        default_normalizer, pre_tokenizer = default_pipeline(trainer, with_normalizer=normalizer is None)
        normalizer = normalizer if normalizer is not None else default_normalizer
    model, parts = _train(source, trainer, pre_tokenizer, normalizer, None, decoder, errors, count)
    return cls(model, **parts)


def train_model(tokenizer: Tok, source: TrainingSource, trainer: Optional[Trainer] = None, *,
                pre_tokenizer: Any = DEFAULT, normalizer: Optional["Normalizer"] = None,
                decoder: Optional["Decoder"] = None, errors: str = "strict") -> Tok:
    """``tokenizer`` with its model replaced by one learned from ``source`` (see
    :meth:`Tokenizer.train_model`)."""
    trainer = _checked(trainer)
    normalizer = normalizer if normalizer is not None else tokenizer.normalizer
    if _is_default(pre_tokenizer):
        pre_tokenizer = tokenizer.pre_tokenizer
    model, parts = _train(source, trainer, pre_tokenizer, normalizer, tokenizer.post_processor, decoder, errors)
    truncation, padding = tokenizer.truncation, tokenizer.padding
    tokenizer.__init__(model, **parts)  # type: ignore[misc]  # the pipeline is rebuilt around the new model
    tokenizer.truncation, tokenizer.padding = truncation, padding
    return tokenizer


def _checked(trainer: Optional[Trainer]) -> Trainer:
    if trainer is None:
        return BpeTrainer()
    if not isinstance(trainer, Trainer):
        raise TypeError(f"trainer must be a ciyuan trainer (BpeTrainer, WordPieceTrainer, ...), "
                        f"not {type(trainer).__name__}")
    return trainer


def _is_default(pre_tokenizer: Any) -> bool:
    return isinstance(pre_tokenizer, str) and pre_tokenizer == DEFAULT


def _train(source: TrainingSource, trainer: Trainer, pre_tokenizer: Any, normalizer: Optional["Normalizer"],
           post_processor: Optional["PostProcessor"], decoder: Optional["Decoder"],
           errors: str, count: Optional[Counter] = None) -> Tuple[Any, Dict[str, Any]]:
    """The model ``trainer`` learns, and the tokenizer's other parts around it."""
    if count is None:
        model = trainer.train(source, pre_tokenizer, normalizer, errors=errors)
    else:
        model = trainer.train_words(count(source, trainer, pre_tokenizer, normalizer, errors), consume=True)
    if trainer.lowercase and not isinstance(normalizer, BertNormalizer):  # BERT's normalizer lowercases itself
        lower = normalizers.Lowercase()
        normalizer = lower if normalizer is None else normalizers.Sequence([normalizer, lower])
    specials = {t: token_id for t in trainer.special_tokens if (token_id := model.token_to_id(t)) is not None}
    if post_processor is None and trainer.default_pipeline() is Pipeline.BERT and {"[CLS]", "[SEP]"} <= set(specials):
        from ciyuan.processors import BertProcessing

        post_processor = BertProcessing(sep=("[SEP]", specials["[SEP]"]), cls=("[CLS]", specials["[CLS]"]))
    if decoder is None:
        decoder = model.default_decoder()
    return model, dict(normalizer=normalizer, pre_tokenizer=pre_tokenizer, post_processor=post_processor,
                       decoder=decoder, special_tokens=specials)
