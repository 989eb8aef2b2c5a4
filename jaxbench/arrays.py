"""Arrays across the sandbox boundary: ``.npy`` files, bfloat16 as raw uint16 bits.

The trusted side writes the inputs (``<in>/manifest.json`` plus ``<in>/sets/<set>/<k>.npy``)
and reads the child's outputs back through :class:`jaxbench.sandbox.SafeDir`: regular
files only, no symlinks, a size cap computed from the expected shape, ``allow_pickle=False``,
and the stored dtype and shape must be exactly the expected ones.
"""

from __future__ import annotations

import io
import json
import os

import numpy as np

NPY_HEADER_CAP = 64 << 10
STORAGE = {"bfloat16": "uint16"}  # dtypes numpy has no native code for, and their carrier


class OutputError(ValueError):
    """An output file is missing, malformed, or not of the expected dtype/shape."""

    def __init__(self, category: str, message: str):
        super().__init__(message)
        self.category = category


def dtype_name(dtype) -> str:
    dt = np.dtype(dtype)
    return "bfloat16" if dt.name == "bfloat16" else dt.name


def to_numpy_dtype(name: str):
    if name == "bfloat16":
        import ml_dtypes  # deferred: ml_dtypes comes with JAX; only bf16 arrays need it

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def storage_view(arr: np.ndarray) -> np.ndarray:
    name = dtype_name(arr.dtype)
    if name in STORAGE:
        return arr.view(STORAGE[name])
    return arr


def write_npy(path: str, arr: np.ndarray):
    np.save(path, np.ascontiguousarray(storage_view(arr)), allow_pickle=False)
    os.chmod(path, 0o644)


def write_manifest(in_dir: str, specs: list[dict], sets: dict[str, list[np.ndarray]] | None = None):
    """``specs``: [{"name", "dtype", "shape"}] of the inputs; ``sets``: set id -> arrays
    (optional: sets can be written later, phase by phase, with :func:`write_sets`)."""
    if sets:
        write_sets(in_dir, sets)
    manifest = {"inputs": [{**s, "storage": STORAGE.get(s["dtype"], s["dtype"])} for s in specs]}
    path = os.path.join(in_dir, "manifest.json")
    with open(path, "w") as f:
        json.dump(manifest, f)
    os.chmod(path, 0o644)


def write_sets(in_dir: str, sets: dict[str, list[np.ndarray]]):
    for sid, arrays in sets.items():
        d = os.path.join(in_dir, "sets", sid)
        os.makedirs(d, mode=0o755, exist_ok=True)
        os.chmod(d, 0o755)
        for k, a in enumerate(arrays):
            write_npy(os.path.join(d, f"{k}.npy"), np.asarray(a))


def load_npy_bytes(data: bytes, dtype: str, shape: tuple) -> np.ndarray:
    """Parse one .npy the child wrote; it must hold exactly ``shape`` of ``dtype`` (bfloat16
    as uint16 bits). Returns the array in its real dtype."""
    storage = np.dtype(STORAGE.get(dtype, dtype))
    expected = int(np.prod(shape, dtype=np.int64)) * storage.itemsize
    if len(data) > expected + NPY_HEADER_CAP:
        raise OutputError("shape_mismatch", "output file larger than the expected array")
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:
        raise OutputError("bad_output", f"unreadable output: {type(exc).__name__}: {exc}") from exc
    if not isinstance(arr, np.ndarray) or arr.dtype != storage:
        raise OutputError(
            "dtype_mismatch", f"stored dtype {getattr(arr, 'dtype', None)}, expected {storage} for {dtype}"
        )
    if tuple(arr.shape) != tuple(shape):
        raise OutputError("shape_mismatch", f"shape {tuple(arr.shape)}, expected {tuple(shape)}")
    if dtype in STORAGE:
        arr = arr.view(to_numpy_dtype(dtype))
    return arr
