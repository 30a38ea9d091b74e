"""An independent reader of the Megatron-LM indexed dataset (``.bin`` + ``.idx``), written from
the format's description (megatron-core's ``IndexedDataset``, its data-pipeline readme), not from
ciyuan's writer, to hold the writer to the format in tests.

The ``.idx`` file, all little-endian:

1. the magic ``MMIDIDX\\x00\\x00`` (9 bytes);
2. the version, a u64, 1;
3. the dtype code of the ``.bin`` elements, a u8 (1 uint8, 2 int8, 3 int16, 4 int32, 5 int64,
   6 float64, 7 float32, 8 uint16);
4. the sequence count S, a u64;
5. the document-index count D, a u64;
6. S int32 sequence lengths (elements);
7. S int64 sequence pointers (byte offsets into ``.bin``);
8. D int64 document indices: document ``j`` is sequences ``[doc[j], doc[j + 1])``.

Nothing else follows (no multimodal modes here). The ``.bin`` is the elements back to back.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import List, Union

import numpy as np

_CODES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64, 7: np.float32,
          8: np.uint16}


class MegatronShard:
    """The sequences of one ``.bin``/``.idx`` pair (``prefix`` without the endings)."""

    def __init__(self, prefix: Union[str, Path]) -> None:
        idx = Path(str(prefix) + ".idx").read_bytes()
        if idx[:9] != b"MMIDIDX\x00\x00":
            raise ValueError(f"bad magic {idx[:9]!r}")
        (version,) = struct.unpack_from("<Q", idx, 9)
        if version != 1:
            raise ValueError(f"version {version}")
        (code,) = struct.unpack_from("<B", idx, 17)
        self.dtype = np.dtype(_CODES[code])
        sequences, documents = struct.unpack_from("<QQ", idx, 18)
        at = 34
        self.lengths = np.frombuffer(idx, dtype="<i4", count=sequences, offset=at)
        at += 4 * sequences
        self.pointers = np.frombuffer(idx, dtype="<i8", count=sequences, offset=at)
        at += 8 * sequences
        self.document_indices = np.frombuffer(idx, dtype="<i8", count=documents, offset=at)
        at += 8 * documents
        if at != len(idx):
            raise ValueError(f"{len(idx) - at} bytes after the document indices")
        self.data = np.fromfile(str(prefix) + ".bin", dtype=self.dtype.newbyteorder("<"))
        expected = int(self.lengths.astype(np.int64).sum()) * self.dtype.itemsize
        if expected != len(self.data) * self.dtype.itemsize:
            raise ValueError(f".bin holds {len(self.data)} elements, the index {expected // self.dtype.itemsize}")

    def __len__(self) -> int:
        return len(self.lengths)

    def __getitem__(self, i: int) -> np.ndarray:
        start = int(self.pointers[i]) // self.dtype.itemsize
        return self.data[start:start + int(self.lengths[i])]

    def documents(self) -> List[List[int]]:
        """Every document's ids (a document's sequences concatenated)."""
        docs = []
        for j in range(len(self.document_indices) - 1):
            parts = [self[i] for i in range(int(self.document_indices[j]), int(self.document_indices[j + 1]))]
            docs.append(np.concatenate(parts).tolist() if parts else [])
        return docs
