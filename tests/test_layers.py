"""The apps run one way (portal > leaderboard > evaluator > submissions > catalog > jaxbench), the harness
library imports no Django, and every import inside a function says why it is there."""

import ast
import pathlib
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
APPS = ("portal", "leaderboard", "evaluator", "submissions", "catalog", "jaxbench")
DJANGO_APPS = APPS[:-1]
# ruff's TID253 bans these at module level in the Django apps (pyproject.toml), so an import of
# them inside a function there needs no comment: the rule says why (the worker and the web
# process never load JAX at import, and the worker never opens a device)
BANNED_AT_MODULE_LEVEL = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]["flake8-tidy-imports"][
        "banned-module-level-imports"
    ]
)


def _imports_a_banned_module(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        names = [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names]
    else:
        names = [a.name for a in node.names]
    return any(n == b or n.startswith(b + ".") for n in names for b in BANNED_AT_MODULE_LEVEL)


def test_import_linter_contracts_hold():
    lint = pathlib.Path(sys.executable).with_name("lint-imports")
    out = subprocess.run(
        [str(lint), str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout or "broken" not in out.stdout.split("Contracts:")[-1]


def function_level_imports_without_a_reason():
    """(file, line) of every import inside a function with no comment on it or on the line above."""
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/migrations/" in rel:
                continue
            lines = path.read_text().splitlines()
            for fn in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        if app in DJANGO_APPS and _imports_a_banned_module(node):
                            continue
                        here = "\n".join(lines[node.lineno - 1 : node.end_lineno])
                        i = node.lineno - 2  # a comment may head a run of imports
                        while i >= 0 and lines[i].strip().startswith(("from ", "import ")) and "#" not in lines[i]:
                            i -= 1
                        said = i >= 0 and (
                            lines[i].strip().startswith("#")
                            or (lines[i].strip().startswith(("from ", "import ")) and "#" in lines[i])
                        )
                        if "#" not in here and not said:
                            found.append(f"{rel}:{node.lineno}")
    return found


def test_every_import_inside_a_function_says_why():
    assert function_level_imports_without_a_reason() == []


# the modules that turn the environment into Django settings (and Django's own entry points)
READS_THE_ENVIRONMENT = {"portal/settings.py", "portal/config.py", "portal/wsgi.py", "portal/asgi.py"}


def test_the_django_apps_read_settings_not_the_environment():
    """The environment registry (jaxbench.environment) is read in one place, portal/settings.py
    (through portal/config.py); every other module of the apps reads django.conf.settings."""
    found = []
    for app in DJANGO_APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in READS_THE_ENVIRONMENT or "/migrations/" in rel:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    if (node.value.id, node.attr) in (("environment", "get"), ("os", "environ"), ("os", "getenv")):
                        found.append(f"{rel}:{node.lineno} {node.value.id}.{node.attr}")
    assert found == []
