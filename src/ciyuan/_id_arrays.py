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


def _array(buffer: Any, dtype: str, code: str) -> Any:
    """A buffer of `dtype` items as a numpy array sharing its memory, or as an ``array.array``
    of type `code` (one copy of the bytes, still no Python int per item)."""
    np = numpy_module()
    if np is not None:
        return np.frombuffer(buffer, dtype=dtype)
    out = array.array(code)
    out.frombytes(memoryview(buffer).cast("B"))
    return out


def _array_from_ints(values: Iterable[int], dtype: str, code: str) -> Any:
    """Python ints (a path that had to build them anyway) as the same kind of array."""
    np = numpy_module()
    if np is not None:
        return np.fromiter(values, dtype=dtype)
    return array.array(code, values)


def uint32_array(buffer: Any) -> Any:
    """A uint32 buffer (the native encoder's, which owns its ids) as an array: see _array."""
    return _array(buffer, "uint32", UINT32_CODE)


def int64_array(buffer: Any) -> Any:
    """An int64 buffer as an array: see _array."""
    return _array(buffer, "int64", INT64_CODE)


def uint32_from_ints(ids: Iterable[int]) -> Any:
    """Python ints as a uint32 array of the kind uint32_array gives."""
    return _array_from_ints(ids, "uint32", UINT32_CODE)


def int64_from_ints(values: Iterable[int]) -> Any:
    """Python ints as an int64 array of the kind int64_array gives."""
    return _array_from_ints(values, "int64", INT64_CODE)
