"""make demo's founding-documents part prints the documents' results."""

from __future__ import annotations

from ciyuan.demo import founding_documents
from tests.conftest import shared


def test_founding_documents_without_data(capsys):
    founding_documents(None)
    out = capsys.readouterr().out
    assert "merges [('e', 's'), ('es', 't'), ('est', '</w>')]; tokenize('lowest') -> ['l', 'o', 'w', 'est</w>']" in out
    assert "004 forward_max_matching: 我要/学习/大模型" in out
    assert "002" not in out


def test_founding_documents_with_the_zh_bpe_sample(capsys):
    founding_documents(shared("zh-bpe-sample", "smalltrain.txt").parent.parent)
    assert "002 zh-bpe train on its sample: 423 merges (min_frequency)" in capsys.readouterr().out
