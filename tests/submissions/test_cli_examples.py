"""Every `python -m jaxbench.client ...` command the documents and pages show parses as written
with the client's own parser, and a submit-kernels example names everything the upload needs:
a newcomer copies them verbatim."""

from __future__ import annotations

import pathlib
import re
import shlex

import pytest

from jaxbench.client.__main__ import EPILOG, build_parser

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["README.md", "jaxbench/README.md", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("docs/*.md"))]
SOURCES += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("templates/**/*.html"))
# a command runs to the end of its code span, tag or line
COMMAND = re.compile(r"(?:python -m jaxbench\.client|jaxbench-submit)(?: [^`<\n]*)?")


def examples() -> list[tuple[str, str]]:
    found = [("client --help", line.strip()) for line in EPILOG.splitlines() if "jaxbench.client" in line]
    for rel in SOURCES:
        text = (ROOT / rel).read_text()
        text = re.sub(r"{{[^}]*}}", "X", text)  # a template's {{ request.get_host }} and the like
        found += [(rel, m.group(0).strip()) for m in COMMAND.finditer(text)]
    # "python -m jaxbench.client ..." in prose names the tool, not a command
    return [(where, cmd) for where, cmd in found if not cmd.endswith("...") and cmd != "python -m jaxbench.client"]


def test_the_examples_are_found():
    where = {w for w, _ in examples()}
    assert {"README.md", "client --help", "templates/submissions/submit.html"} <= where


@pytest.mark.parametrize("where, command", examples())
def test_every_documented_cli_example_parses_as_written(where, command, monkeypatch):
    for name in ("JAXBENCH_URL", "JAXBENCH_TOKEN", "JAXBENCH_HARDWARE"):
        monkeypatch.delenv(name, raising=False)
    words = shlex.split(command, comments=True)
    argv = words[3:] if words[:3] == ["python", "-m", "jaxbench.client"] else words[1:]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: `{command}` is refused by the client's parser (exit {exc.code})")
    if args.command == "submit-kernels":
        # --hardware has an environment default, so argparse alone does not require it
        assert args.hardware, f"{where}: `{command}` names no --hardware"
