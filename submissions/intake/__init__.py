"""The one intake path of submissions: the web form, the REST API and the CLI all come through
``create_kernel_submission`` / ``create_trace_submission`` (``service``); a test run, a private
evaluation of a few kernels, through ``create_test_run`` (``test_runs``). Validation of
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
from submissions.intake.test_runs import create_test_run, delete_test_run, expire_test_runs, promote_test_run
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
    "create_test_run",
    "create_trace_submission",
    "delete_test_run",
    "existing_upload",
    "expire_test_runs",
    "promote_test_run",
    "resolve_team",
    "teams_for",
]
