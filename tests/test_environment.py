"""Every environment variable is declared once (jaxbench/environment.py), read through
it, and listed in the README exactly as declared."""

import pathlib
import re

import pytest

from jaxbench import environment

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- environment table: python -m jaxbench.environment -->", "<!-- end of environment table -->"
SOURCES = [
    p
    for d in ("portal", "catalog", "submissions", "evaluator", "leaderboard", "tests", "benchmarks", "jaxbench")
    for p in (ROOT / d).rglob("*.py")
    if "/migrations/" not in p.as_posix()
]


def test_the_readme_table_is_the_declared_list():
    readme = (ROOT / "README.md").read_text()
    assert BEGIN in readme and END in readme, "the README lost its environment table markers"
    table = readme.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert table == environment.markdown_table().strip(), (
        "README's table differs: paste the output of `python -m jaxbench.environment` between the markers"
    )


def test_every_variable_the_code_names_is_declared():
    named = set()
    for path in SOURCES + [ROOT / "Makefile"]:
        named.update(re.findall(r"\bJAXBENCH_[A-Z_]+\b", path.read_text()))
    named -= {"JAXBENCH_"}
    assert sorted(named - set(environment.BY_NAME)) == []


def test_nothing_reads_a_jaxbench_variable_around_the_list():
    """Reads go through environment.get; writing one (a child's environment, a test) is fine."""
    pattern = re.compile(
        r"""(os\.environ\.get|os\.getenv|environ\[)\(?\s*["'](JAXBENCH_|DATABASE_URL|DRAMATIQ_BROKER_URL|DJANGO_(?!SETTINGS))"""
    )
    offenders = []
    for path in SOURCES:
        if path.name == "environment.py" or path.parts[-2] == "tests" and path.name == "test_environment.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line) and not re.search(r"environ\[[^\]]+\]\s*=", line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


@pytest.mark.parametrize(
    "name,raw,expected",
    [
        ("JAXBENCH_REQUIRE_PALLAS", "off", False),
        ("JAXBENCH_LEASE_SECONDS", "30", 30),
        ("JAXBENCH_TIMEOUTS", "compile=60, check=120", {"compile": 60.0, "check": 120.0}),
        ("DJANGO_ALLOWED_HOSTS", "a.example, b.example", ["a.example", "b.example"]),
        ("JAXBENCH_LEASE_SECONDS", "", 900),
    ],
)
def test_values_are_parsed_by_their_declared_type(name, raw, expected):
    assert environment.get(name, {name: raw}) == expected


@pytest.mark.parametrize(
    "name,raw",
    [
        ("JAXBENCH_REQUIRE_PALLAS", "maybe"),
        ("JAXBENCH_LEASE_SECONDS", "soon"),
        ("JAXBENCH_TIMEOUTS", "compile=fast"),
        ("JAXBENCH_LOG_LEVEL", "LOUD"),
    ],
)
def test_a_bad_value_names_the_variable(name, raw):
    with pytest.raises(environment.ConfigError, match=name):
        environment.get(name, {name: raw})
