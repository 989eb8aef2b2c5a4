"""Upload limits: the one place each cap is defined.

The web forms, the REST API, the intake, the trace format (its JSON Schema and the parser) and
the client all read them here, so a limit changed here changes everywhere at once. Django-free:
the client checks an upload against them before sending it.
"""

from __future__ import annotations

# -- kernel uploads ---------------------------------------------------------------------------
MAX_KERNEL_BYTES = 256 * 1024  # one kernel file
MAX_FILES = 200  # files in one kernel submission before duplicates are found
MAX_ZIP_BYTES = 32 * 1024 * 1024  # one archive, compressed
MAX_ZIP_ENTRIES = 2000
MAX_ZIP_DIRECTORY_BYTES = MAX_ZIP_ENTRIES * 1024  # the central directory zipfile parses up front
MAX_ZIP_UNCOMPRESSED = 32 * 1024 * 1024  # the kernel members of one archive, decompressed, together
MAX_ZIP_DEPTH = 6  # path components of a member, file name included

# -- test runs (a private evaluation of a few kernels: docs/DESIGN.md, "Test runs") ----------
TEST_RUN_MAX_KERNELS = 5  # kernel files in one test run
TEST_RUN_MAX_LIVE = 10  # a user's test runs not yet deleted or expired
TEST_RUN_DAYS = 7  # a test run is deleted this long after it was made, unless promoted

# -- trace uploads ----------------------------------------------------------------------------
MAX_TRACE_BYTES = 128 * 1024 * 1024  # a whole trace
MAX_LINE_BYTES = 2 * 1024 * 1024  # one line (a sample's code is JSON-escaped in it)
MAX_CODE_CHARS = MAX_KERNEL_BYTES  # one sample's code, the same cap as a kernel file
MAX_SAMPLES = 50_000  # a whole trace (50 workloads x 1000)
MAX_BUDGET = 100_000  # a trace's declared sample budget
MAX_OBJECT_CHARS = 64 * 1024  # the header's free-form settings, as JSON

# -- a submission's metadata (form, API, trace header; the model's column widths) --------------
META_LIMITS = {
    "method": 120,
    "model_name": 120,
    "framework": 120,
    "description": 10_000,
    "link": 200,
    "selector": 300,
    "upload_key": 128,
}
