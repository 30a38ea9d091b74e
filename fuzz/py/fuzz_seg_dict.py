"""Fuzz target "seg_dict": a segmentation dictionary file (``word``, ``word freq [pos]`` or
``word pos`` per line) loaded strictly or not, then every method (fmm, bmm, bimm, dag, each with
and without the bakeoff baseline) segmenting text from the input, as strings and as bytes.

Run: ``make fuzz TARGET=seg_dict SECONDS=600``.
"""

from __future__ import annotations

from _harness import TEXTS, Data, ciyuan_errors_only, instrumented, main, scratch_file

with instrumented():
    from ciyuan._text import replace_surrogates
    from ciyuan.segment import Dictionary, Segmenter
    from ciyuan.segment.segmenter import METHODS


def test_one(data: bytes) -> None:
    d = Data(data[::-1])
    path = scratch_file("dict.txt", data)
    with ciyuan_errors_only():
        dictionary = Dictionary.load(path, strict=bool(d.byte() & 1))
        text = d.text(64) + TEXTS[d.byte() % len(TEXTS)]
        raw = d.raw(64)
        for method in METHODS:
            for baseline in (False, True):
                with ciyuan_errors_only():
                    seg = Segmenter(dictionary, method, baseline=baseline, max_word_len=d.byte() % 6 or None)
                    words = list(seg.cut(text))
                    if not baseline:
                        # the words tile the text (lone surrogates read as U+FFFD, as everywhere)
                        assert "".join(words) == replace_surrogates(text), (method, words, text)
                    seg.segment_bytes(raw)


if __name__ == "__main__":
    main(test_one)
