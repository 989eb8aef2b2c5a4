"""The design documents live in docs/, and every citation of one holds: the code, templates,
tests and docs name DESIGN.md, TRUST.md and WORKLOADS.md (sometimes with a quoted section
title, or a rule number of TRUST.md); each cited document, section and rule must exist."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NAMES = ("DESIGN", "TRUST", "WORKLOADS")
SCANNED = (
    "benchmarks",
    "jaxbench",
    "catalog",
    "docs",
    "evaluator",
    "leaderboard",
    "portal",
    "submissions",
    "templates",
    "tests",
)
# Forms cited: DESIGN.md's, (DESIGN.md, "Metrics"), DESIGN.md 'Facts from the source study',
# TRUST.md 1, TRUST.md point 4, `docs/TRUST.md` 2.
CITE = re.compile(
    r"\b(DESIGN|TRUST|WORKLOADS)\.md`?(?:'s)?(?:,?[ \t]+(?:point[ \t]+)?"
    r"(?:\"([^\"\n]+)\"|'([^'\n]+)'|(\d+)\b))?"
)


def _sources():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in (".py", ".html", ".md") and path.is_file():
                yield path
    yield ROOT / "README.md"


def _citations():
    return [
        (str(path.relative_to(ROOT)), m)
        for path in _sources()
        for m in CITE.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]


def _headings(name):
    text = (DOCS / f"{name}.md").read_text(encoding="utf-8")
    return [line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")]


def _trust_rules():
    text = (DOCS / "TRUST.md").read_text(encoding="utf-8")
    return re.findall(r"^(\d+)\. \*\*", text, re.M)


def test_the_documents_are_in_the_repository():
    for name in NAMES:
        assert (DOCS / f"{name}.md").is_file(), f"docs/{name}.md is missing"
    assert _trust_rules() == [str(n) for n in range(1, 11)]


def test_every_cited_section_and_rule_exists():
    citations = _citations()
    assert len(citations) > 20, "the scan found too few citations: is the pattern still right?"
    headings = {name: _headings(name) for name in NAMES}
    rules = set(_trust_rules())
    for where, m in citations:
        name, section, number = m.group(1), m.group(2) or m.group(3), m.group(4)
        if section:
            assert any(section in h for h in headings[name]), f"{where}: {name}.md has no section {section!r}"
        if number:
            assert name == "TRUST" and number in rules, f"{where}: no rule {number} in {name}.md"


def test_nothing_cites_documents_outside_the_repository():
    for path in _sources():
        if path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for outside in (
            "WORKLOADS-SEMANTICS",
            "shared/DESIGN",
            "shared/TRUST",
            "shared/WORKLOADS",
            # spelled in two parts so the environment test does not count it as a variable
            "JAXBENCH_" + "DESIGN_MD",
        ):
            assert outside not in text, f"{path.relative_to(ROOT)} cites {outside}"


def test_the_docs_page_states_the_adaptive_samplings_numbers_as_the_harness_has_them():
    from jaxbench.harness import settings as s

    page = (ROOT / "templates" / "portal" / "docs.html").read_text()
    para = page[page.index('id="resolution"') :]
    para = para[: para.index("</p>")]
    stated = (
        f"±{s.RESOLUTION_TARGET['cpu']:.0%}",
        f"±{s.RESOLUTION_TARGET_DEFAULT:.0%}",
        f"{s.MAX_TIMING_ROUNDS} rounds ({s.MAX_TIMING_ROUNDS * s.ITERS} pairs)",
        f"{s.TIMING_BUDGET_S['cpu']:g} s on the CPU target",
        f"{s.TIMING_BUDGET_S_DEFAULT:g} s on an",
        f"round of {s.ITERS} pairs",
        f"never fewer than {s.MIN_TIMING_ROUNDS['cpu']} rounds on the CPU target, {s.MIN_TIMING_ROUNDS_DEFAULT} on an",
    )
    missing = [x for x in stated if x not in para]
    assert not missing, f"the docs page's adaptive sampling paragraph does not say {missing}"
