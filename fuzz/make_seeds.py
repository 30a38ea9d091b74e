"""Writes the seed inputs of the Python fuzz targets into tests/fuzz_corpus/NAME/seed-*: small
valid files of every format, made by ciyuan itself (so no third-party file is copied into the
repository). Run once by hand (``.venv/bin/python fuzz/make_seeds.py``); the fuzzer then grows
the corpus from them, and ``make fuzz-merge`` keeps what adds coverage.

Example:
    $ .venv/bin/python fuzz/make_seeds.py
    tests/fuzz_corpus/tiktoken: 2 seeds
"""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path
from typing import Dict

from ciyuan import Tokenizer
from ciyuan.normalizers import SentencePieceNormalizer
from ciyuan.trainers import BpeTrainer, SentencePieceBPETrainer, UnigramTrainer, WordPieceTrainer

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "fuzz_corpus"
CORPUS = ["low lower lowest newer wider", "中文 分词 测试 中文 分词", "hello world 123 héllo 🙂", "ab ab abc abcd"] * 4


def write(name: str, seeds: Dict[str, bytes]) -> None:
    folder = OUT / name
    folder.mkdir(parents=True, exist_ok=True)
    for key, data in seeds.items():
        (folder / f"seed-{key}").write_bytes(data)
    print(f"{folder.relative_to(REPO)}: {len(seeds)} seeds")


def main() -> None:
    byte_bpe = Tokenizer.train(CORPUS, BpeTrainer(vocab_size=300, byte_level=True))
    ranks = [(byte_bpe.model.id_bytes(i), i) for i in range(byte_bpe.model.id_limit)]
    tiktoken = b"".join(base64.b64encode(t) + b" %d\n" % i for t, i in ranks if t is not None)
    write("tiktoken", {"trained": tiktoken, "bytes-only": tiktoken.split(b"\n", 256)[0] + b"\n"})

    wordpiece = Tokenizer.train(CORPUS, WordPieceTrainer(vocab_size=90))
    vocab = sorted(wordpiece.get_vocab().items(), key=lambda kv: kv[1])
    write("bert_vocab", {"trained": "".join(t + "\n" for t, _ in vocab).encode()})

    char_bpe = Tokenizer.train(CORPUS, BpeTrainer(vocab_size=60, end_of_word_suffix="</w>"))
    cv = sorted(char_bpe.get_vocab().items(), key=lambda kv: kv[1])
    merges = [f"{a} {b}" for a, b in char_bpe.model.merges]
    vocab_txt = "".join(t + "\n" for t, _ in cv).encode()
    write("vocab_merges", {
        "vocab-merges": vocab_txt + b"\0" + ("#version: 0.2\n" + "\n".join(merges) + "\n").encode(),
        "gpt2": json.dumps(dict(cv)).encode() + b"\0" + ("#version: 0.2\n" + "\n".join(merges) + "\n").encode(),
    })

    codes = "#version: 0.2\n" + "\n".join(merges) + "\n"
    write("subword_nmt", {"codes": codes.encode(), "codes-vocab": codes.encode() + b"\0low 5\nlower 2\nnewer 1\n"})

    write("seg_dict", {
        "words": "中文\n分词\n测试\n中文分词\n".encode(),
        "jieba": "中文 30 n\n分词 20 v\n测试 10\n中 5\n文 3\n".encode(),
        "pos": "中文 n\n分词 v\n".encode(),
    })

    with tempfile.TemporaryDirectory() as tmp:
        seeds = {}
        trainers = (("unigram", UnigramTrainer(vocab_size=40)), ("bpe", SentencePieceBPETrainer(vocab_size=40)))
        for key, trainer in trainers:
            tok = Tokenizer.train(CORPUS, trainer, normalizer=SentencePieceNormalizer("identity"))
            path = Path(tmp) / f"{key}.model"
            try:
                tok.save(path)
            except Exception as e:  # a pipeline .model cannot hold: say so, keep the others
                print(f"spm_model seed {key}: {e}")
                continue
            seeds[key] = path.read_bytes()
        write("spm_model", seeds)

    for name in ("tokenizer_json", "models", "trainers"):
        # Inputs are mutation recipes, not files: a few fixed byte strings start them.
        write(name, {f"{i}": bytes(range(i, i + 64)) for i in (0, 7, 31)})


if __name__ == "__main__":
    main()
