"""What every intake step takes and raises: an uploaded file, the error that lists every problem,
the size caps of kernel files, and a reader that never reads past a cap."""

from __future__ import annotations

import dataclasses

from jaxbench import traces as trace_format


class IntakeError(Exception):
    """Bad input. ``errors`` is a list of dicts with ``message``, ``field`` and where known
    ``file`` (an uploaded file or archive member) or ``line`` (a trace line), plus ``input`` (the
    form or API field that carried the file)."""

    def __init__(self, errors: list[dict] | str, field: str | None = None):
        if isinstance(errors, str):
            errors = [{"field": field, "message": errors}]
        self.errors = errors
        super().__init__("; ".join(trace_format.format_error(e) for e in errors[:5]))

    def as_dict(self) -> dict:
        n = len(self.errors)
        return {
            "detail": f"The submission was rejected: {n} problem{'s' if n != 1 else ''} found; nothing was stored.",
            "errors": self.errors,
        }


@dataclasses.dataclass
class Upload:
    """One uploaded file: ``data`` is bytes or a binary file object (read with a size cap).
    ``workload`` forces the workload (a form row); ``input`` names the field that carried it."""

    name: str
    data: bytes | str | object
    workload: str | None = None
    input: str | None = None
    archive: bool | None = None  # None: a .zip by its name


def read_capped(data, limit: int) -> bytes | None:
    """The bytes of ``data`` (bytes or a binary file), or None when longer than ``limit``."""
    if isinstance(data, (bytes, bytearray)):
        return bytes(data) if len(data) <= limit else None
    size = getattr(data, "size", None)
    if isinstance(size, int) and size > limit:
        return None
    if hasattr(data, "seek"):
        try:
            data.seek(0)
        except (OSError, ValueError):
            pass
    raw = data.read(limit + 1)
    if isinstance(raw, str):
        raw = raw.encode()
    return raw if len(raw) <= limit else None
