"""The correctness rule of the harness, as one pure function (numpy only: no Django, no JAX).

An output passes when every element satisfies ``|ref - cand| <= atol + rtol * |ref|``, computed
in float32, and every element of both arrays is finite (a single NaN or Inf fails; numpy's
``allclose`` would accept Inf == Inf and a ``max|diff| < tol`` check would miss NaN). The
reference is the baseline's output, so the relative term scales with the reference (the public
harness scales with the candidate; the two differ only at the margin).
"""
from __future__ import annotations

import numpy as np


def _as_f32(x) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype == np.float32:
        return arr
    return arr.astype(np.float32)


def allclose_report(ref, cand, atol: float, rtol: float) -> dict:
    """Compare ``cand`` with ``ref`` elementwise under the harness rule.

    Returns ``passed`` (bool), ``max_abs`` (largest |ref - cand| over elements where both are
    finite), ``max_rel`` (largest |ref - cand| / |ref| over those where also ref != 0),
    ``n_bad`` (elements that fail, non-finite ones included) and ``n_nonfinite`` (elements where
    either side is NaN or Inf). Shapes must be identical: no broadcasting; a mismatch raises
    ``ValueError`` (the harness checks shapes before it compares values).
    """
    r = _as_f32(ref)
    c = _as_f32(cand)
    if r.shape != c.shape:
        raise ValueError(f"shape mismatch: reference {r.shape}, candidate {c.shape}")
    if atol < 0 or rtol < 0:
        raise ValueError("atol and rtol must be >= 0")
    finite = np.isfinite(r) & np.isfinite(c)
    n_nonfinite = int(r.size - np.count_nonzero(finite))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(finite, np.abs(r - c), np.float32(0))
        ok = finite & (diff <= np.float32(atol) + np.float32(rtol) * np.abs(r))
        nz = finite & (r != 0)
        rel = np.where(nz, diff / np.where(nz, np.abs(r), np.float32(1)), np.float32(0))
    n_bad = int(r.size - np.count_nonzero(ok))
    return {
        "passed": n_bad == 0,
        "max_abs": float(diff.max()) if diff.size else 0.0,
        "max_rel": float(rel.max()) if rel.size else 0.0,
        "n_bad": n_bad,
        "n_nonfinite": n_nonfinite,
    }
