"""Kernel files inside a .zip: which members are kernels, and refusing zip bombs and unsafe paths
without extracting anything."""

from __future__ import annotations

import io
import re
import struct
import zipfile

from jaxbench import traces as trace_format
from jaxbench.limits import (
    MAX_FILES,
    MAX_KERNEL_BYTES,
    MAX_ZIP_BYTES,
    MAX_ZIP_DEPTH,
    MAX_ZIP_DIRECTORY_BYTES,
    MAX_ZIP_ENTRIES,
    MAX_ZIP_UNCOMPRESSED,
)
from submissions.intake.uploads import Upload, read_capped

# Deflate is decompressed in bounded steps; bzip2 and LZMA members are decompressed a whole input
# chunk at a time (a few hundred bytes of bzip2 expand to gigabytes), so they are refused.
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
# Public-harness folders hold the XLA baseline next to the kernel; it is not a candidate.
IGNORED_PY = {"baseline.py", "__init__.py", "setup.py", "conftest.py"}
IGNORED_DIRS = {"__MACOSX", "__pycache__"}


_UNSAFE = re.compile(r"(^|/)\.\.(/|$)")


def member_problem(path: str) -> str | None:
    """Why an archive member's path is unsafe, or None."""
    if "\x00" in path or "\\" in path:
        return "unsafe path (backslashes or NUL bytes in a member name)"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "unsafe path (absolute)"
    if _UNSAFE.search(path):
        return "unsafe path (it climbs out of the archive with ..)"
    return None


_LEVEL_DIR = re.compile(r"level[2-9]")


def workload_of_path(path: str, catalog: trace_format.WorkloadCatalog) -> str | None:
    """``12p.py``, ``12p-rmsnorm.py``, ``12p_RMSNorm.py``, or any ``.py`` inside a folder so
    named (``12p_RMSNorm/optimized.py``, ``out/12p_RMSNorm/kernel.py``). Below a ``level<N>``
    folder, as the public suite lays out its later levels, the name is that level's
    (``level2/8p_GEMM/optimized.py``: level 2's 8p, not level 1's)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    for i in (len(parts) - 2, len(parts) - 3):
        if i >= 0 and _LEVEL_DIR.fullmatch(parts[i]):
            return catalog.resolve(f"{parts[i]}/{parts[i + 1]}")
    wid = catalog.resolve(parts[-1])
    if wid is None and len(parts) > 1:
        wid = catalog.resolve(parts[-2])
    return wid


def zip_directory_problem(raw: bytes) -> str | None:
    """Why the archive's central directory is too big to parse, or None. Read from the end
    record before ``zipfile`` builds an object per entry (a 30 MB archive of empty entries
    costs it seconds and hundreds of MB)."""
    try:
        endrec = zipfile._EndRecData(io.BytesIO(raw))
    except (AttributeError, OSError, ValueError, EOFError, struct.error):
        return None  # zipfile itself will judge the archive
    if not endrec:
        return None
    entries, size = endrec[zipfile._ECD_ENTRIES_TOTAL], endrec[zipfile._ECD_SIZE]
    if entries > MAX_ZIP_ENTRIES or size > MAX_ZIP_DIRECTORY_BYTES:
        return f"more than {MAX_ZIP_ENTRIES} entries"
    return None


def expand_zip(upload: Upload, catalog: trace_format.WorkloadCatalog) -> tuple[list[tuple[Upload, str]], list[dict]]:
    """The kernel members of an archive as ``(Upload, workload id)``, or errors.

    Zip bombs are refused without extracting: the central directory's size is checked before
    it is parsed; the members to read are chosen first (at most MAX_FILES), then their declared
    sizes (each and together) and compression methods are checked, and while reading, each
    member is cut at MAX_KERNEL_BYTES and the bytes actually read count against
    MAX_ZIP_UNCOMPRESSED."""

    def err(field, message, member=None):
        return {
            "file": f"{upload.name}: {member}" if member else upload.name,
            "field": field,
            "message": message,
            **({"input": upload.input} if upload.input else {}),
        }

    raw = read_capped(upload.data, MAX_ZIP_BYTES)
    if raw is None:
        return [], [err("size", f"the archive is larger than {MAX_ZIP_BYTES // (1024 * 1024)} MB")]
    problem = zip_directory_problem(raw)
    if problem:
        return [], [err("archive", problem)]
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, NotImplementedError):
        return [], [err("archive", "not a readable .zip archive")]
    if len(infos) > MAX_ZIP_ENTRIES:
        return [], [err("archive", f"more than {MAX_ZIP_ENTRIES} entries")]
    # 1. choose the kernel members, reading nothing
    chosen, errors = [], []
    for info in infos:
        path = info.filename
        # zipfile cuts a name at its first NUL ("12p.py\x00.txt" reads as "12p.py"): judge the
        # name as stored in the archive.
        problem = member_problem(getattr(info, "orig_filename", path))
        if problem:
            errors.append(err("path", problem, path[:200]))
            continue
        if info.is_dir():
            continue
        parts = [p for p in path.split("/") if p and p != "."]
        if any(p.startswith(".") or p in IGNORED_DIRS for p in parts):
            continue  # hidden files, macOS resource forks, caches
        if not parts[-1].endswith(".py") or parts[-1] in IGNORED_PY:
            continue  # logs, notes, results and the public baseline stay out
        if len(parts) > MAX_ZIP_DEPTH:
            errors.append(err("path", f"nested more than {MAX_ZIP_DEPTH - 1} folders deep", path[:200]))
            continue
        if info.flag_bits & 0x1:
            errors.append(err("archive", "encrypted members are not supported", path))
            continue
        if info.compress_type not in ZIP_METHODS:
            errors.append(
                err(
                    "archive",
                    f"unsupported compression method {info.compress_type}: use deflate (the zip default) or store",
                    path,
                )
            )
            continue
        if info.file_size > MAX_KERNEL_BYTES:
            errors.append(err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB", path))
            continue
        wid = workload_of_path("/".join(parts), catalog)
        if wid is None:
            errors.append(
                err(
                    "name",
                    f"cannot tell the workload: name the file or its folder by a workload ({catalog.hint()})",
                    path,
                )
            )
            continue
        chosen.append((info, path, wid))
    if len(chosen) > MAX_FILES:
        return [], errors + [err("archive", f"more than {MAX_FILES} kernel files")]
    if sum(info.file_size for info, _, _ in chosen) > MAX_ZIP_UNCOMPRESSED:
        return [], errors + [
            err("size", f"the kernel files add up to more than {MAX_ZIP_UNCOMPRESSED // (1024 * 1024)} MB uncompressed")
        ]
    # 2. read them, counting what decompression actually yields
    out, budget = [], MAX_ZIP_UNCOMPRESSED
    for info, path, wid in chosen:
        try:
            with zf.open(info) as fh:
                data = fh.read(min(MAX_KERNEL_BYTES, budget) + 1)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, ValueError, EOFError):
            errors.append(err("archive", "this member cannot be extracted (corrupt or unsupported compression)", path))
            continue
        budget -= len(data)
        if budget < 0:
            return [], errors + [
                err(
                    "size",
                    f"the kernel files add up to more than {MAX_ZIP_UNCOMPRESSED // (1024 * 1024)} MB uncompressed",
                    path,
                )
            ]
        if len(data) > MAX_KERNEL_BYTES:
            errors.append(err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB", path))
            continue
        out.append((Upload(f"{upload.name}: {path}", data, input=upload.input), wid))
    if not out and not errors:
        errors.append(
            err("archive", "the archive holds no kernel .py files (named by workload, or in folders named by workload)")
        )
    return out, errors
