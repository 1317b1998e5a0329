"""MSC's string forms of attribute values.

MSCGraph stores every attribute as a string.  The rules below are those of TVM MSC
(``src/contrib/msc/core/ir/graph_builder.h`` ``AttrGetter`` and ``src/contrib/msc/core/utils.cc``
``StringUtils::ToString``, commit ff29817d57 / release v0.20):

* int            -> ``std::to_string``             ``3``        -> ``"3"``
* bool           -> ``std::to_string(bool)``       ``True``     -> ``"1"``, ``False`` -> ``"0"``
* float / double -> ``std::to_string(double)``     ``1e-5``     -> ``"0.000010"`` (fixed, 6 decimals)
* DataType       -> ``"float32"`` ...;  string -> as is;  None / undefined -> ``""``
* arrays         -> elements joined by ``,``;  a 1-element array gets a trailing comma
  (``[1]`` -> ``"1,"``); an empty array -> ``""``; nested arrays are stringified recursively
  (``[[1, 2], [3, 4]]`` -> ``"1,2,3,4"``).
* the ``scalar`` attr of a 0-d constant (``graph_builder.cc`` ``GetScalarStr``): the value as a
  C ``float`` printed with ``std::fixed << std::setprecision(6)``.

Deliberate difference (MSC defect): fixed 6 decimals lose small or precise values
(``1e-12`` -> ``"0.000000"``).  Here a float whose 6-decimal form does not read back to the same
value (by ``atof``/``float``) is written in the shortest form that does round-trip
(``1e-12`` -> ``"1e-12"``, ``0.7071067811865476`` -> ``"0.7071067811865476"``).  Every value that
MSC writes exactly is written byte-identically (``"0.000010"``, ``"0.100000"``, ``"inf"``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["attr_str", "float_str", "scalar_str", "SIX_DECIMAL_LOSSY"]

SIX_DECIMAL_LOSSY = "value not representable with 6 fixed decimals: written so that it round-trips"


def float_str(value: float) -> str:
    """``std::to_string(double)`` (``"%f"``), or the shortest round-tripping form if that loses the value."""
    v = float(value)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = "%f" % v
    if float(s) == v:
        return s
    return repr(v)


def scalar_str(value: Any) -> str:
    """The ``scalar`` attr of a 0-d constant: a float32 with 6 fixed decimals (round-trip fallback).

    Integer constants use ``std::to_string(int)`` as MSC's ``GetScalarStr`` does.
    """
    arr = np.asarray(value)
    if arr.dtype.kind in "iub":
        return str(int(arr))
    v = np.float32(arr)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = "%.6f" % float(v)
    if np.float32(float(s)) == v:
        return s
    return str(v)  # numpy's shortest repr that round-trips a float32, e.g. "0.70710677", "1e-12"


def attr_str(value: Any) -> str:
    """Stringify an attribute value the way MSC does (see module docstring)."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return float_str(float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        out = ""
        n = len(value)
        for i, item in enumerate(value):
            out += attr_str(item)
            if n == 1 or i < n - 1:
                out += ","
        return out
    raise TypeError(f"cannot stringify attribute value {value!r} ({type(value).__name__})")
