"""Fuzz target "tokenizer_json": Hugging Face ``tokenizer.json`` and ciyuan JSON files, made by
mutating small valid files as trees (the input chooses a node and what it becomes: another type,
a huge or negative number, NaN, a deep nesting, a copy of another node, nothing), so that every
stage's reader - models over random vocabularies included - sees wrongly typed, out-of-range and
inconsistent fields rather than JSON syntax errors. An input whose first byte is 0xFF is instead
the file's raw bytes. A file that loads is then used (``exercise``).

Run: ``make fuzz TARGET=tokenizer_json SECONDS=600``.
"""

from __future__ import annotations

import contextlib
import copy
import json
from functools import lru_cache
from typing import Any, List, Tuple

from _harness import Data, ciyuan_errors_only, exercise, instrumented, main, scratch_file

with instrumented():
    from ciyuan import Tokenizer
    from ciyuan.formats.hf_json import hf_json_dict
    from ciyuan.trainers import BpeTrainer, CharLevelTrainer, UnigramTrainer, WordLevelTrainer, WordPieceTrainer

CORPUS = ["low lower lowest newer wider", "中文 分词 测试 中文", "hello world 123 héllo", "ab ab abc abcd"] * 3


@lru_cache(maxsize=1)
def seeds() -> Tuple[Any, ...]:
    """Small valid files, as dicts: one per model family, in both formats."""
    trainers = [BpeTrainer(vocab_size=280, byte_level=True), BpeTrainer(vocab_size=40, end_of_word_suffix="</w>"),
                WordPieceTrainer(vocab_size=90), WordLevelTrainer(vocab_size=30), CharLevelTrainer(),
                UnigramTrainer(vocab_size=30)]
    out: List[Any] = []
    for trainer in trainers:
        tok = Tokenizer.train(CORPUS, trainer)
        out.append(tok.to_dict())
        with contextlib.suppress(Exception):  # a model Hugging Face has no form for: the ciyuan file only
            out.append(hf_json_dict(tok))
    return tuple(out)


def nodes(tree: Any) -> List[Tuple[Any, Any]]:
    """Every (container, key) pair of the tree, in a fixed order."""
    out: List[Tuple[Any, Any]] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        items: List[Tuple[Any, Any]] = []
        if isinstance(node, dict):
            items = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        for key, value in items:
            out.append((node, key))
            stack.append(value)
    return out


def value(d: Data, tree: Any, all_nodes: List[Tuple[Any, Any]]) -> Any:
    """A replacement value chosen by the input."""
    kind = d.byte() % 14
    if kind == 0:
        return None
    if kind == 1:
        return bool(d.byte() & 1)
    if kind == 2:
        return (0, -1, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**64, -2**63, 10**30)[d.byte() % 11]
    if kind == 3:
        return d.int_in(-5, 70000)
    if kind == 4:
        return (float("nan"), float("inf"), -float("inf"), 1e308, -0.0, 0.5)[d.byte() % 6]
    if kind == 5:
        return d.text(16)
    if kind in (6, 7):
        return []
    if kind == 8:
        return {}
    if kind == 9:
        deep: Any = []
        for _ in range(d.int_in(1, 3000)):
            deep = [deep]
        return deep
    if kind == 10 and all_nodes:
        container, key = all_nodes[d.int_in(0, len(all_nodes) - 1)]
        return copy.deepcopy(container[key])
    if kind == 11:
        return [d.text(8), d.int_in(-2, 300)]
    if kind == 12:
        return {d.text(6): d.int_in(-2, 2**16) for _ in range(d.byte() % 4)}
    return ["", 0]


def mutate(d: Data, tree: Any) -> None:
    for _ in range(1 + d.byte() % 4):
        all_nodes = nodes(tree)
        if not all_nodes:
            return
        container, key = all_nodes[d.int_in(0, len(all_nodes) - 1)]
        op = d.byte() % 8
        if op == 0:
            del container[key]
        elif op == 1 and isinstance(container, list):
            container.insert(key, copy.deepcopy(container[key]))
        elif op == 2 and isinstance(container, dict):
            container[d.text(10)] = value(d, tree, all_nodes)
        else:
            container[key] = value(d, tree, all_nodes)


def test_one(data: bytes) -> None:
    if data[:1] == b"\xff":
        raw = data[1:]
    else:
        d = Data(data)
        all_seeds = seeds()
        tree = copy.deepcopy(all_seeds[d.byte() % len(all_seeds)])
        try:
            mutate(d, tree)
            raw = json.dumps(tree).encode()
        except RecursionError:  # deepcopy's or json.dumps's limit on the mutated tree, not ciyuan's
            return
    path = scratch_file("tokenizer.json", raw)
    with ciyuan_errors_only():
        tok = Tokenizer.from_file(path)
        exercise(tok, Data(data[::-1]))


if __name__ == "__main__":
    main(test_one)
