"""``python -m ciyuan.demo`` (``make demo``): the main job end to end, with timings.

1. Trains a byte-level BPE tokenizer on ciyuan's own source files (always at hand), saves it,
   loads it back and encodes with it.
2. With ../shared/data beside the repository: loads the GPT-4 (cl100k_base) and GPT-4o
   (o200k_base) vocabularies, encodes and decodes 10 MB of English and of Chinese, checks
   every id against tiktoken when it is installed, and reports throughput.
"""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

import ciyuan

SAMPLE = "ciyuan (词元) cuts text into tokens: \"Hello, world!\" -> ids -> text, exactly as tiktoken does."


def find_shared_data() -> Optional[Path]:
    """../shared/data next to the repository (or $CIYUAN_SHARED_DATA)."""
    candidates: List[Union[str, Path]] = [os.environ.get("CIYUAN_SHARED_DATA", ""),
                                          Path.cwd().parent / "shared" / "data",
                                          Path.cwd() / ".." / ".." / "shared" / "data"]
    for c in candidates:
        if c and (Path(c) / "tokenizers" / "tiktoken").is_dir():
            return Path(c).resolve()
    return None


def read_prefix(path: Path, limit: int) -> str:
    with open(path, "rb") as f:
        data = f.read(limit)
    return data[: data.rfind(b"\n") + 1].decode("utf-8")


def train_on_own_sources() -> None:
    """Train on the package's own .py files, save, reload, and encode a sample."""
    import tempfile

    from ciyuan.models import BPE
    from ciyuan.trainers import BpeTrainer

    sources = sorted(str(p) for p in Path(ciyuan.__file__).parent.rglob("*.py"))
    size = sum(Path(p).stat().st_size for p in sources) / 1e6
    print(f"== training a byte-level BPE (vocab 2,000) on ciyuan's own {len(sources)} source files ({size:.1f} MB)")
    start = time.perf_counter()
    trainer = BpeTrainer(vocab_size=2000, byte_level=True, min_frequency=2, show_progress=False)
    tok = ciyuan.Tokenizer.train(sources, trainer)
    assert isinstance(tok.model, BPE)  # what a BpeTrainer trains
    print(f"   trained in {time.perf_counter() - start:.2f} s: {tok.vocab_size:,} tokens, "
          f"first merges {tok.model.merges[:5]}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ciyuan-bpe.json"
        tok.save(path)
        tok = ciyuan.Tokenizer.from_file(path)
        print(f"   saved and reloaded {path.name} ({path.stat().st_size / 1e3:.0f} KB)")
    line = "def encode(self, text: str) -> Encoding:"
    enc = tok.encode(line)
    print(f"   {line!r} -> {len(enc.ids)} tokens {enc.tokens}")
    assert tok.decode(enc.ids) == line


def founding_documents(data: Optional[Path]) -> None:
    """A worked example of three founding documents (ciyuan.textbook; docs/seeds.md has all)."""
    from ciyuan import textbook

    print("\n== the founding documents (ciyuan.textbook; every example: docs/seeds.md)")
    bpe = textbook.BPETokenizer(vocab_size=1000)
    bpe.fit(["low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3], max_steps=3, out_fn=None)
    print(f"   000 BPETokenizer.fit: merges {bpe.merges}; tokenize('lowest') -> {bpe.tokenize('lowest')}")
    words = {"大模型", "学习", "模型", "我要", "要"}
    print(f"   004 forward_max_matching: {'/'.join(textbook.forward_max_matching('我要学习大模型', words))}")
    sample = data / "zh-bpe-sample" if data is not None else None
    if sample is None or not (sample / "smalltrain.txt").exists():
        return
    start = time.perf_counter()
    training = textbook.zh_bpe_train(sample / "smalltrain.txt", None)
    units = textbook.zh_units(f"{a} {b}" for a, b in training.merges)
    first = (sample / "smalltest.txt").read_text(encoding="utf-8").split("\n")[0]
    line = textbook.ZhBpeSegmenter(units).segment_text(first)
    print(f"   002 zh-bpe train on its sample: {len(training.merges)} merges ({training.stop}) in "
          f"{time.perf_counter() - start:.2f} s; apply -> {line[:60]}...")


def main() -> int:
    train_on_own_sources()
    data = find_shared_data()
    founding_documents(data)
    if data is None:
        print("\nciyuan demo: ../shared/data (tokenizer files and corpora) was not found, so the "
              "cl100k_base / o200k_base part is skipped; set CIYUAN_SHARED_DATA to its path.")
        return 0
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
        have_tiktoken = True
    except ImportError:
        have_tiktoken = False
    corpora = {
        "English (Gutenberg)": data / "corpora" / "en" / "gutenberg_100mb.txt",
        "Chinese (Jin Yong)": data / "corpora" / "zh" / "jinyong_16novels.txt",
    }
    texts = {name: read_prefix(path, 10_000_000) for name, path in corpora.items() if path.exists()}
    for encoding in ("cl100k_base", "o200k_base"):
        path = data / "tokenizers" / "tiktoken" / f"{encoding}.tiktoken"
        start = time.perf_counter()
        tok = ciyuan.Tokenizer.from_tiktoken(path, encoding)
        print(f"\n== {encoding}: {tok.vocab_size:,} tokens, loaded in {time.perf_counter() - start:.2f} s")
        enc = tok.encode(SAMPLE)
        print(f"   text    : {SAMPLE}")
        print(f"   tokens  : {enc.tokens[:16]} ...")
        print(f"   ids     : {enc.ids[:16]} ...")
        print(f"   offsets : {enc.offsets[:6]} ...")
        assert tok.decode(enc.ids) == SAMPLE
        reference = None
        if have_tiktoken:
            reference = tiktoken.Encoding(encoding, pat_str=ciyuan.pre_tokenizers.NAMED_PATTERNS[encoding],
                                          mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={})
        for name, text in texts.items():
            mb = len(text.encode("utf-8")) / 1e6
            start = time.perf_counter()
            ids = tok.encode_ids(text)
            seconds = time.perf_counter() - start
            line = f"   {name}: {mb:.1f} MB -> {len(ids):,} tokens in {seconds:.2f} s ({mb / seconds:.1f} MB/s)"
            assert tok.decode(ids) == text, "round trip failed"
            line += ", decode(encode(x)) == x"
            if reference is not None:
                line, same = _against(line, "tiktoken", partial(reference.encode_ordinary, text), ids, mb)
                if not same:
                    print(line)
                    return 1
            print(line)
    return bert(data, texts)


def _against(line: str, name: str, reference: Callable[[], Any], ids: Any, mb: float,
             how: str = "") -> Tuple[str, bool]:
    """``line`` with how ``reference()``'s ids compare to ``ids`` (and its speed), and whether
    they are the same."""
    start = time.perf_counter()
    same = reference() == ids
    line += f", ids {'identical to' if same else 'DIFFERENT from'} {name}"
    line += f" ({how}{mb / (time.perf_counter() - start):.1f} MB/s)"
    return line, same


def bert(data: Path, texts: dict) -> int:
    """The BERT pipeline from bert-base-uncased's vocab.txt, line by line, checked against
    Hugging Face's BertWordPieceTokenizer when it is installed."""
    path = data / "tokenizers" / "bert" / "bert-base-uncased-vocab.txt"
    text = texts.get("English (Gutenberg)")
    if not path.exists() or text is None:
        print("\nDone. More: `ciyuan --help`, README.md, docs/.")
        return 0
    tok = ciyuan.Tokenizer.from_bert_vocab(path)
    enc = tok.encode("Hello, world!", "Is this the second sentence?")
    print(f"\n== BERT (bert-base-uncased vocab.txt, WordPiece): {tok.vocab_size:,} tokens")
    print(f"   pair    : {enc.tokens}")
    print(f"   type ids: {enc.type_ids}")
    lines = text.split("\n")
    mb = len(text.encode("utf-8")) / 1e6
    start = time.perf_counter()
    ids = tok.encode_batch_ids(lines, threads=1)
    seconds = time.perf_counter() - start
    line = f"   English: {mb:.1f} MB, {len(lines):,} lines -> {sum(map(len, ids)):,} ids in {seconds:.2f} s " \
           f"({mb / seconds:.1f} MB/s, one thread, [CLS]/[SEP] added)"
    try:
        from tokenizers import BertWordPieceTokenizer
    except ImportError:
        BertWordPieceTokenizer = None
    if BertWordPieceTokenizer is not None:
        hf = BertWordPieceTokenizer(str(path), lowercase=True)
        line, same = _against(line, "Hugging Face's", lambda: [e.ids for e in hf.encode_batch(lines)], ids, mb,
                              "its encode_batch on all cores: ")
        if not same:
            print(line)
            return 1
    print(line)
    print("\nDone. More: `ciyuan --help`, README.md, docs/.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
