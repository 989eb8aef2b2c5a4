"""Checking kernel files without running them (``ast.parse`` only): size, UTF-8, Python syntax,
a module-level ``workload``, one file per known workload."""

from __future__ import annotations

import ast
import dataclasses
import posixpath
from collections.abc import Iterable

from jaxbench import traces as trace_format
from jaxbench.limits import MAX_FILES, MAX_KERNEL_BYTES
from submissions.intake.archives import expand_zip
from submissions.intake.uploads import Upload, read_capped


@dataclasses.dataclass
class KernelFile:
    wid: str
    name: str
    code: str


def defines_workload(tree: ast.Module) -> bool:
    """A module-level ``def workload``, ``workload = ...`` or ``import ... as workload``, also
    inside module-level ``if``/``try`` blocks."""

    def scan(body) -> bool:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "workload":
                return True
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "workload" for t in node.targets
            ):
                return True
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == "workload"
                and node.value is not None
            ):
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (a.asname or a.name) == "workload" for a in node.names
            ):
                return True
            if isinstance(node, ast.If) and (scan(node.body) or scan(node.orelse)):
                return True
            if isinstance(node, ast.Try) and (
                scan(node.body) or scan(node.orelse) or scan(node.finalbody) or any(scan(h.body) for h in node.handlers)
            ):
                return True
        return False

    return scan(tree.body)


def check_kernel_source(raw: bytes | str, name: str) -> tuple[str | None, list[dict]]:
    """Validate one kernel source: size, UTF-8, Python syntax (never executed), a module-level
    ``workload``. Returns (code, errors)."""

    def err(field, message):
        return None, [{"file": name, "field": field, "message": message}]

    if raw is None:
        return err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB")
    if isinstance(raw, str):
        code = raw
        if len(code.encode("utf-8", "surrogatepass")) > MAX_KERNEL_BYTES:
            return err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB")
        try:
            code.encode("utf-8")
        except UnicodeEncodeError:
            return err("encoding", "not valid Unicode text (lone surrogates)")
    else:
        if len(raw) > MAX_KERNEL_BYTES:
            return err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB")
        try:
            code = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            return err("encoding", f"not UTF-8 text (invalid byte at offset {exc.start})")
    if not code.strip():
        return err("code", "the file is empty")
    if "\x00" in code:
        return err("syntax", "the file contains NUL bytes; it is not Python source")
    try:
        tree = ast.parse(code, filename=name)
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        return err("syntax", f"not valid Python: {where}{exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:
        return err("syntax", f"not valid Python: {exc.__class__.__name__}")
    if not defines_workload(tree):
        return err(
            "workload",
            "defines no module-level `workload` function: a candidate is a module "
            "with `def workload(*inputs)` (the public suite's kernel interface)",
        )
    return code, []


LIST_HINT = "the workloads are listed at /workloads/ and by `python -m jaxbench.client workloads`"


def validate_kernel_uploads(
    uploads: Iterable[Upload], catalog: trace_format.WorkloadCatalog
) -> tuple[list[KernelFile], list[dict]]:
    """Every file checked, archives expanded; each workload at most once."""
    files, errors = [], []
    expanded: list[tuple[Upload, str | None]] = []
    for up in uploads:
        is_zip = up.archive if up.archive is not None else (up.name.lower().endswith(".zip") and up.workload is None)
        if is_zip:
            members, errs = expand_zip(up, catalog)
            expanded.extend(members)
            errors.extend(errs)
        else:
            expanded.append((up, None))
    if len(expanded) > MAX_FILES:
        return [], [{"file": None, "field": "files", "message": f"more than {MAX_FILES} files"}]
    first_of: dict[str, str] = {}
    for up, wid in expanded:

        def add(field, message, up=up):
            errors.append(
                {"file": up.name, "field": field, "message": message, **({"input": up.input} if up.input else {})}
            )

        base = posixpath.basename(up.name.replace("\\", "/"))
        if wid is None:
            named = catalog.resolve(base) if base else None
            if up.workload is not None:
                wid = catalog.resolve(up.workload)
                if wid is None:
                    add("name", f"unknown workload {up.workload!r}: {catalog.hint()}")
                    continue
                if named is not None and named != wid:
                    add("name", f"the file is named for workload {named} but was given for {wid}")
                    continue
            else:
                # a name without an extension is a workload key (the API's "kernels" object):
                # the workload is what is wrong with it, not the file type
                if not base.endswith(".py") and named is None and "." in base:
                    add("name", "a kernel file must be a .py file named by its workload (or a .zip of them)")
                    continue
                wid = named
                if wid is None:
                    add("name", f"unknown workload {base.removesuffix('.py')!r}: {catalog.hint()}; {LIST_HINT}")
                    continue
        raw = read_capped(up.data, MAX_KERNEL_BYTES) if not isinstance(up.data, str) else up.data
        code, errs = check_kernel_source(raw, up.name)
        for e in errs:
            if up.input:
                e["input"] = up.input
        errors.extend(errs)
        if wid in first_of:
            add("name", f"workload {wid} given twice in one upload (also {first_of[wid]}); keep one")
            continue
        first_of[wid] = up.name
        if code is not None:
            files.append(KernelFile(wid=wid, name=up.name, code=code))
    if not files and not errors:
        errors.append(
            {
                "file": None,
                "field": "files",
                "message": "no kernel files: upload one .py per workload or a .zip of them",
            }
        )
    return files, errors
