"""The one intake path of submissions: the web form, the REST API and the CLI all come through
``create_kernel_submission`` / ``create_trace_submission`` (``service``). Validation of
uploaded files lives in ``uploads`` (the error, the upload, the caps), ``archives`` (.zip) and
``kernels`` (Python sources); nothing submitted is imported or executed here."""

from jaxbench.limits import MAX_FILES, MAX_KERNEL_BYTES, MAX_ZIP_BYTES, MAX_ZIP_UNCOMPRESSED
from submissions.intake.service import (
    KNOWN_METHODS,
    KNOWN_MODELS,
    create_kernel_submission,
    create_trace_submission,
    existing_upload,
    resolve_team,
    teams_for,
)
from submissions.intake.uploads import IntakeError, Upload

__all__ = [
    "KNOWN_METHODS",
    "KNOWN_MODELS",
    "MAX_FILES",
    "MAX_KERNEL_BYTES",
    "MAX_ZIP_BYTES",
    "MAX_ZIP_UNCOMPRESSED",
    "IntakeError",
    "Upload",
    "create_kernel_submission",
    "create_trace_submission",
    "existing_upload",
    "resolve_team",
    "teams_for",
]
