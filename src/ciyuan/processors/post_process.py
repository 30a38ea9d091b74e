"""post_process: truncation then the post-processor, in Hugging Face ``Tokenizer.post_process``'s
order and with its rules.

1. Truncation, to ``max_length`` minus the tokens the processor will add (when
   ``add_special_tokens``). As in HF, a ``max_length`` below that count does not truncate at
   all (HF's unsigned subtraction wraps around).
2. The processor (e.g. the BERT template). Without one, a single sequence is returned as is and
   a pair is concatenated (sequence ids 0 and 1, type ids 0 and 1).

Padding is separate (:func:`~ciyuan.processors.pad` / :func:`~ciyuan.processors.pad_batch`)
because ``"longest"`` needs the whole batch.

Raw encodings are what the model gives: their type ids are taken to be the sequence index (0 for
the first text, 1 for the second), as HF's ``encode`` makes them. They are never changed.
"""

from __future__ import annotations

from typing import Optional

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors.base import PostProcessor
from ciyuan.processors.truncation import Truncation, truncate_encodings

__all__ = ["post_process"]


def _node(encoding: Encoding, index: int) -> Encoding:
    """A composed Encoding we own, standing for the raw input ``index`` (type id = index)."""
    if not isinstance(encoding, Encoding):
        raise InvalidInputError(f"expected a ciyuan Encoding, not {type(encoding).__name__}")
    return encoding.copy(type_id=index)


def post_process(
    encoding: Encoding,
    pair: Optional[Encoding] = None,
    *,
    processor: Optional[PostProcessor] = None,
    truncation: Optional[Truncation] = None,
    add_special_tokens: bool = True,
) -> Encoding:
    """Truncate and post-process raw encodings into the model's input, as HF does.

    Args:
        encoding: the first sequence as the model encoded it (no special tokens added).
        pair: the second sequence, if any.
        processor: e.g. :class:`~ciyuan.processors.TemplateProcessing` or
            :class:`~ciyuan.processors.BertProcessing`; None adds nothing.
        truncation: truncation settings, or None.
        add_special_tokens: False applies the template without its special tokens (and then
            truncation does not reserve room for them).

    Returns:
        A new Encoding; the inputs are not changed.

    Raises:
        InvalidInputError: the truncation cannot be done (see
            :func:`~ciyuan.processors.truncation.truncate_encodings`).

    Example:
        >>> from ciyuan.processors import BertProcessing, Truncation
        >>> raw = Encoding(None, ids=[7592, 2088, 999], offsets=[(0, 5), (6, 11), (11, 12)],
        ...                tokens=["hello", "world", "!"])
        >>> enc = post_process(raw, processor=BertProcessing(), truncation=Truncation(4))
        >>> enc.tokens, [o.tokens for o in enc.overflowing]
        (['[CLS]', 'hello', 'world', '[SEP]'], [['[CLS]', '!', '[SEP]']])
    """
    owned = False  # whether encoding/pair are already our own composed copies
    if truncation is not None:
        added = processor.num_special_tokens_to_add(pair is not None) if processor is not None else 0
        limit = truncation.max_length - added if add_special_tokens else truncation.max_length
        total = len(encoding) + (len(pair) if pair is not None else 0)
        # limit < 0: HF's unsigned subtraction wraps around, so nothing is truncated.
        # total <= limit (limit > 0): truncation would change nothing; skip the copies.
        if limit == 0 or (limit > 0 and total > limit):
            a = _node(encoding, 0)
            b = _node(pair, 1) if pair is not None else None
            encoding, pair = truncate_encodings(a, b, truncation, limit)
            owned = True
    if processor is not None:
        return processor.process(encoding, pair, add_special_tokens)
    # No processor: HF returns a single sequence as it is, and concatenates a pair with sequence
    # ids set on the two main encodings only (so combined overflowing windows that lack sequence
    # 0 report every token as sequence 0, as HF does).
    if pair is None:
        return encoding if owned else _node(encoding, 0)
    nodes = []
    for index, enc in enumerate((encoding, pair)):
        node = enc if owned else _node(enc, index)
        node.set_sequence_id(index)
        nodes.append(node)
    return Encoding.merge(nodes)
