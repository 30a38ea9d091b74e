"""Arrays of ids without a Python int per id: a numpy array when numpy is importable, else an
``array.array``. Both export the buffer protocol, so either can be handed back to
:meth:`~ciyuan.Tokenizer.decode` or to any library that reads buffers.

numpy is optional: it is imported on first use, never when ciyuan is imported.

Example:
    >>> import array
    >>> ids = uint32_array(array.array(UINT32_CODE, [1, 2, 3]))
    >>> ids.tolist()
    [1, 2, 3]
"""

from __future__ import annotations

import array
from typing import Any, Iterable, Optional

# array.array's codes for 4- and 8-byte integers (the C types behind them vary by platform).
UINT32_CODE = next(c for c in "ILH" if array.array(c).itemsize == 4)
INT64_CODE = next(c for c in "ql" if array.array(c).itemsize == 8)

_numpy: Any = None  # the module once looked up; False when it is not installed


def numpy_module() -> Optional[Any]:
    """numpy, or None when it cannot be imported (looked up once)."""
    global _numpy
    if _numpy is None:
        try:
            import numpy
        except ImportError:
            _numpy = False
        else:
            _numpy = numpy
    return _numpy or None


def uint32_array(buffer: Any) -> Any:
    """A uint32 buffer (the native encoder's, which owns its ids) as a numpy array that shares
    its memory, or as an ``array.array`` (one copy of the bytes, still no int per id)."""
    np = numpy_module()
    if np is not None:
        return np.frombuffer(buffer, dtype=np.uint32)
    out = array.array(UINT32_CODE)
    out.frombytes(memoryview(buffer).cast("B"))
    return out


def int64_array(buffer: Any) -> Any:
    """An int64 buffer as a numpy array (shared memory) or an ``array.array``."""
    np = numpy_module()
    if np is not None:
        return np.frombuffer(buffer, dtype=np.int64)
    out = array.array(INT64_CODE)
    out.frombytes(memoryview(buffer).cast("B"))
    return out


def uint32_from_ints(ids: Iterable[int]) -> Any:
    """Python ints (a path that had to build them anyway) as the same kind of array."""
    np = numpy_module()
    if np is not None:
        return np.fromiter(ids, dtype=np.uint32)
    return array.array(UINT32_CODE, ids)


def int64_from_ints(values: Iterable[int]) -> Any:
    """Python ints as an int64 array of the same kind."""
    np = numpy_module()
    if np is not None:
        return np.fromiter(values, dtype=np.int64)
    return array.array(INT64_CODE, values)
