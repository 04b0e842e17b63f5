"""Arrays as text for the viewer's page: base64 of their little-endian values with
their dtype and shape (the page decodes them into typed arrays)."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["packed", "unpacked"]


def packed(array: NDArray[Any], dtype: str = "<f4") -> dict[str, Any]:
    """{"dtype", "shape", "b64"}: the array as base64 of its little-endian values."""
    a = np.ascontiguousarray(array, dtype=dtype)
    return {
        "dtype": {"<f4": "float32", "<f8": "float64", "<u4": "uint32"}[dtype],
        "shape": list(a.shape),
        "b64": base64.b64encode(a.tobytes()).decode("ascii"),
    }


def unpacked(item: Mapping[str, Any]) -> NDArray[Any]:
    """The array of a `packed` item (for tests and tools)."""
    dtype = {"float32": "<f4", "float64": "<f8", "uint32": "<u4"}[item["dtype"]]
    raw = base64.b64decode(item["b64"])
    return np.frombuffer(raw, dtype=dtype).reshape(item["shape"])
