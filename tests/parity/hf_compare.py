"""Helpers: run the same post-processing through Hugging Face ``tokenizers`` and ciyuan and compare
every field of the results, overflowing windows included (recursively, in order).

HF gives the raw encodings (``add_special_tokens=False``, no truncation or padding); ciyuan
Encodings are built from their ids, offsets and tokens, so only post-processing is under test.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import pytest

from ciyuan.encoding import Encoding
from ciyuan.errors import InvalidInputError
from ciyuan.processors import Padding, Truncation, pad_batch, post_process

Input = Union[str, Tuple[str, str]]


def fields(enc: Any) -> Dict[str, Any]:
    """Every compared field of an Encoding (HF's or ours), overflowing included."""
    return {
        "ids": list(enc.ids),
        "type_ids": list(enc.type_ids),
        "tokens": list(enc.tokens),
        "offsets": [tuple(o) for o in enc.offsets],
        "attention_mask": list(enc.attention_mask),
        "special_tokens_mask": list(enc.special_tokens_mask),
        "sequence_ids": list(enc.sequence_ids),
        "n_sequences": enc.n_sequences,
        "overflowing": [fields(o) for o in enc.overflowing],
    }


def raw(hf_plain: Any, text: str, lazy: bool = False) -> Encoding:
    """A ciyuan Encoding holding HF's raw encoding of ``text`` (flat, as a model gives it)."""
    e = hf_plain.encode(text, add_special_tokens=False)
    ids, offsets, tokens = list(e.ids), [tuple(o) for o in e.offsets], list(e.tokens)
    if lazy:  # the form the Tokenizer builds: fields made on first use
        return Encoding(None, make_ids=lambda: ids, make_offsets=lambda: offsets, tokens=tokens)
    return Encoding(None, ids=ids, offsets=offsets, tokens=tokens)


def configure(hf: Any, truncation: Optional[Truncation], padding: Optional[Padding]) -> Optional[BaseException]:
    """Set HF's truncation and padding; returns the error HF raised while setting them, if any."""
    hf.no_truncation()
    hf.no_padding()
    if padding is not None:
        hf.enable_padding(direction=padding.direction, pad_id=padding.pad_id, pad_type_id=padding.pad_type_id,
                          pad_token=padding.pad_token, length=padding.length,
                          pad_to_multiple_of=padding.pad_to_multiple_of)
    if truncation is not None:
        try:
            hf.enable_truncation(truncation.max_length, stride=truncation.stride, strategy=truncation.strategy,
                                 direction=truncation.direction)
        except Exception as e:  # noqa: BLE001 - HF's own validation
            return e
    return None


def hf_run(hf: Any, inputs: Sequence[Input], batch: bool, add_special_tokens: bool
           ) -> Tuple[Optional[List[Any]], Optional[BaseException]]:
    try:
        if batch:
            return hf.encode_batch(list(inputs), add_special_tokens=add_special_tokens), None
        return [hf.encode(*((x,) if isinstance(x, str) else x), add_special_tokens=add_special_tokens)
                for x in inputs], None
    except BaseException as e:  # noqa: BLE001 - HF panics are BaseException (pyo3 PanicException)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return None, e


def ours_run(hf_plain: Any, processor: Any, inputs: Sequence[Input], truncation: Optional[Truncation],
             padding: Optional[Padding], batch: bool, add_special_tokens: bool,
             lazy: bool = False) -> List[Encoding]:
    out = []
    for x in inputs:
        a, b = (x, None) if isinstance(x, str) else x
        enc = post_process(raw(hf_plain, a, lazy), raw(hf_plain, b, lazy) if b is not None else None,
                           processor=processor, truncation=truncation, add_special_tokens=add_special_tokens)
        if padding is not None and not batch:
            enc = pad_batch([enc], padding)[0]  # HF pads a single encode on its own
        out.append(enc)
    if padding is not None and batch:
        out = pad_batch(out, padding)
    return out


def compare(hf: Any, hf_plain: Any, processor: Any, inputs: Sequence[Input], *,
            truncation: Optional[Truncation] = None, padding: Optional[Padding] = None,
            batch: bool = False, add_special_tokens: bool = True, lazy: bool = False) -> None:
    """Assert ciyuan == HF on ``inputs`` (or that both refuse them)."""
    set_error = configure(hf, truncation, padding)
    if set_error is not None:
        # HF refuses the stride when truncation is enabled; so must Truncation.check.
        added = processor.num_special_tokens_to_add(False) if processor is not None else 0
        with pytest.raises(InvalidInputError):
            truncation.check(added)  # type: ignore[union-attr]
        return
    if truncation is not None:
        truncation.check(processor.num_special_tokens_to_add(False) if processor is not None else 0)
    theirs, error = hf_run(hf, inputs, batch, add_special_tokens)
    if error is not None:
        with pytest.raises(InvalidInputError):
            ours_run(hf_plain, processor, inputs, truncation, padding, batch, add_special_tokens, lazy)
        return
    ours = ours_run(hf_plain, processor, inputs, truncation, padding, batch, add_special_tokens, lazy)
    assert theirs is not None and len(ours) == len(theirs)
    for x, o, t in zip(inputs, ours, theirs):
        fo, ft = fields(o), fields(t)
        if fo != ft:
            for key in fo:
                assert fo[key] == ft[key], f"{key} differs for {x!r} ({truncation}, {padding}, batch={batch})"
        assert fo == ft
