"""The one intake path of submissions: web form, REST API and CLI all come through here.

Everything is validated first (pure helpers below); only then, in ONE transaction, the
Submission, its Candidates (bulk) and their first Evaluation rows
(``evaluator.pipeline.schedule_submission``) are created. Bad input raises :class:`IntakeError`
with a list of ``{"file" | "line", "field", "message"}`` and stores nothing.

Submitted code is never imported or executed here: ``ast.parse`` only.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import io
import posixpath
import re
import struct
import zipfile
from typing import Iterable

from django.db import IntegrityError, transaction

from portal import trace_format
from portal.models import Candidate, Submission

MAX_KERNEL_BYTES = 256 * 1024        # one kernel file
MAX_ZIP_BYTES = 32 * 1024 * 1024     # one archive, compressed
MAX_ZIP_ENTRIES = 2000
MAX_ZIP_DIRECTORY_BYTES = MAX_ZIP_ENTRIES * 1024   # the central directory zipfile parses up front
MAX_ZIP_UNCOMPRESSED = 32 * 1024 * 1024   # the kernel members of one archive, decompressed, together
# Deflate is decompressed in bounded steps; bzip2 and LZMA members are decompressed a whole input
# chunk at a time (a few hundred bytes of bzip2 expand to gigabytes), so they are refused.
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
MAX_ZIP_DEPTH = 6                    # path components of a member, file name included
MAX_FILES = 200                      # files in one kernel submission before duplicates are found
# Public-harness folders hold the XLA baseline next to the kernel; it is not a candidate.
IGNORED_PY = {"baseline.py", "__init__.py", "setup.py", "conftest.py"}
IGNORED_DIRS = {"__MACOSX", "__pycache__"}

KNOWN_METHODS = ["Best-of-N", "Iterative refinement", "Iterative refinement + TPU context",
                 "Autocomp", "Hand-written", "Expert (Tokamax)"]
KNOWN_MODELS = ["Gemini 3 Flash", "Gemini 3.1 Pro", "Gemini 2.5 Pro", "Claude Opus 4", "Claude Sonnet 4",
                "GPT-5", "o3", "DeepSeek-V3", "Qwen3-Coder", "Human"]


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
        return {"detail": f"The submission was rejected: {n} problem{'s' if n != 1 else ''} found; "
                          f"nothing was stored.",
                "errors": self.errors}


@dataclasses.dataclass
class Upload:
    """One uploaded file: ``data`` is bytes or a binary file object (read with a size cap).
    ``workload`` forces the workload (a form row); ``input`` names the field that carried it."""

    name: str
    data: bytes | str | object
    workload: str | None = None
    input: str | None = None
    archive: bool | None = None       # None: a .zip by its name


@dataclasses.dataclass
class KernelFile:
    wid: str
    name: str
    code: str


# -- catalogues -------------------------------------------------------------------------------

def workload_catalog() -> tuple[trace_format.WorkloadCatalog, dict[str, int]]:
    """The workload names the portal knows (synced from the registry) and their row ids."""
    from evaluator.models import Workload
    rows = list(Workload.objects.values_list("wid", "slug", "public_name", "pk"))
    return trace_format.WorkloadCatalog((w, s, p) for w, s, p, _ in rows), {w: pk for w, _, _, pk in rows}


def resolve_hardware(hardware):
    from evaluator.models import HardwareTarget
    if isinstance(hardware, HardwareTarget):
        return hardware
    slug = (hardware or "").strip() if isinstance(hardware, str) else ""
    target = HardwareTarget.objects.filter(slug=slug).first() if slug else None
    if target is None:
        known = ", ".join(HardwareTarget.objects.values_list("slug", flat=True)) or "none synced"
        raise IntakeError(f"unknown hardware target {slug!r}; known: {known}" if slug
                          else f"choose a hardware target; known: {known}", field="hardware")
    return target


# -- pure validation helpers ------------------------------------------------------------------

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


def defines_workload(tree: ast.Module) -> bool:
    """A module-level ``def workload``, ``workload = ...`` or ``import ... as workload``, also
    inside module-level ``if``/``try`` blocks."""
    def scan(body) -> bool:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "workload":
                return True
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "workload"
                                                    for t in node.targets):
                return True
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                    and node.target.id == "workload" and node.value is not None:
                return True
            if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name) == "workload" for a in node.names):
                return True
            if isinstance(node, ast.If) and (scan(node.body) or scan(node.orelse)):
                return True
            if isinstance(node, ast.Try) and (scan(node.body) or scan(node.orelse) or scan(node.finalbody)
                                              or any(scan(h.body) for h in node.handlers)):
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
        return err("workload", "defines no module-level `workload` function: a candidate is a module "
                               "with `def workload(*inputs)` (the public suite's kernel interface)")
    return code, []


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


def workload_of_path(path: str, catalog: trace_format.WorkloadCatalog) -> str | None:
    """``12p.py``, ``12p-rmsnorm.py``, ``12p_RMSNorm.py``, or any ``.py`` inside a folder so
    named (``12p_RMSNorm/optimized.py``, ``out/12p_RMSNorm/kernel.py``)."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
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
        return None           # zipfile itself will judge the archive
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
        return {"file": f"{upload.name}: {member}" if member else upload.name, "field": field,
                "message": message, **({"input": upload.input} if upload.input else {})}
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
            continue          # hidden files, macOS resource forks, caches
        if not parts[-1].endswith(".py") or parts[-1] in IGNORED_PY:
            continue          # logs, notes, results and the public baseline stay out
        if len(parts) > MAX_ZIP_DEPTH:
            errors.append(err("path", f"nested more than {MAX_ZIP_DEPTH - 1} folders deep", path[:200]))
            continue
        if info.flag_bits & 0x1:
            errors.append(err("archive", "encrypted members are not supported", path))
            continue
        if info.compress_type not in ZIP_METHODS:
            errors.append(err("archive", f"unsupported compression method {info.compress_type}: use deflate "
                                         f"(the zip default) or store", path))
            continue
        if info.file_size > MAX_KERNEL_BYTES:
            errors.append(err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB", path))
            continue
        wid = workload_of_path("/".join(parts), catalog)
        if wid is None:
            errors.append(err("name", f"cannot tell the workload: name the file or its folder by a workload "
                                      f"({catalog.hint()})", path))
            continue
        chosen.append((info, path, wid))
    if len(chosen) > MAX_FILES:
        return [], errors + [err("archive", f"more than {MAX_FILES} kernel files")]
    if sum(info.file_size for info, _, _ in chosen) > MAX_ZIP_UNCOMPRESSED:
        return [], errors + [err("size", f"the kernel files add up to more than "
                                         f"{MAX_ZIP_UNCOMPRESSED // (1024 * 1024)} MB uncompressed")]
    # 2. read them, counting what decompression actually yields
    out, budget = [], MAX_ZIP_UNCOMPRESSED
    for info, path, wid in chosen:
        try:
            with zf.open(info) as fh:
                data = fh.read(min(MAX_KERNEL_BYTES, budget) + 1)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, ValueError, EOFError):
            errors.append(err("archive", "this member cannot be extracted (corrupt or unsupported "
                                         "compression)", path))
            continue
        budget -= len(data)
        if budget < 0:
            return [], errors + [err("size", f"the kernel files add up to more than "
                                             f"{MAX_ZIP_UNCOMPRESSED // (1024 * 1024)} MB uncompressed", path)]
        if len(data) > MAX_KERNEL_BYTES:
            errors.append(err("size", f"larger than {MAX_KERNEL_BYTES // 1024} KB", path))
            continue
        out.append((Upload(f"{upload.name}: {path}", data, input=upload.input), wid))
    if not out and not errors:
        errors.append(err("archive", "the archive holds no kernel .py files (named by workload, or in "
                                     "folders named by workload)"))
    return out, errors


def validate_kernel_uploads(uploads: Iterable[Upload], catalog: trace_format.WorkloadCatalog
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
        def add(field, message):
            errors.append({"file": up.name, "field": field, "message": message,
                           **({"input": up.input} if up.input else {})})
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
                if not base.endswith(".py") and named is None:
                    add("name", "a kernel file must be a .py file named by its workload (or a .zip of them)")
                    continue
                wid = named
                if wid is None:
                    add("name", f"unknown workload name {base!r}: {catalog.hint()}")
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
        errors.append({"file": None, "field": "files", "message": "no kernel files: upload one .py per "
                                                                  "workload or a .zip of them"})
    return files, errors


_META_LIMITS = {"method": 120, "model_name": 120, "framework": 120, "description": 10_000, "link": 200}
_LINK_RE = re.compile(trace_format.LINK_PATTERN)
_UPLOAD_KEY_RE = re.compile(trace_format.UPLOAD_KEY_PATTERN)


def clean_meta(meta: dict) -> tuple[dict, list[dict]]:
    """method (required), model_name, framework, description, link, upload_key."""
    out, errors = {}, []
    if "model" in meta and "model_name" not in meta:
        meta = {**meta, "model_name": meta["model"]}
    for key, limit in _META_LIMITS.items():
        value = meta.get(key)
        if value is None:
            value = ""
        if not isinstance(value, str):
            errors.append({"field": key, "message": "must be a string"})
            continue
        value = value.strip()
        if len(value) > limit:
            errors.append({"field": key, "message": f"at most {limit} characters"})
            continue
        out[key] = value
    if "method" in out and not out["method"]:
        errors.append({"field": "method", "message": "name the method (e.g. Best-of-N, Autocomp, Hand-written)"})
    if out.get("link") and not _LINK_RE.match(out["link"]):
        errors.append({"field": "link", "message": "must be an http(s) URL"})
    key = meta.get("upload_key")
    out["upload_key"] = None
    if key not in (None, ""):
        if not isinstance(key, str) or not _UPLOAD_KEY_RE.match(key):
            errors.append({"field": "upload_key", "message": "1-128 characters: letters, digits and ._:/+=-, "
                                                             "starting with a letter or digit"})
        else:
            out["upload_key"] = key
    return out, errors


def check_team(team, user) -> None:
    if team is None:
        raise IntakeError("choose a team", field="team")
    if not (user is not None and user.is_authenticated and team.is_member(user)):
        raise IntakeError(f"you are not a member of team {team.slug!r}", field="team")


# -- creation ---------------------------------------------------------------------------------

def existing_upload(team, upload_key: str | None) -> Submission | None:
    if not upload_key:
        return None
    return Submission.objects.filter(team=team, upload_key=upload_key).first()


# The columns of a trace sample's Candidate row, in the order create_trace_submission builds them.
_TRACE_COLUMNS = ("submission_id", "workload_id", "index", "round", "parent_index", "code", "code_sha256",
                  "reported_outcome", "reported_speedup", "reported_speedup_lo", "reported_speedup_hi",
                  "tokens_in", "tokens_out", "cost_usd")


def _store(submission: Submission, candidates: list[Candidate] = (), rows: list[tuple] | None = None
           ) -> Submission:
    """One transaction: the submission, its candidates, their evaluations (enqueued on commit).
    ``candidates`` are Candidate instances; or ``rows`` are tuples of ``_TRACE_COLUMNS`` less the
    submission (a trace's thousands of samples: inserted by ``evaluator.bulk.insert_rows``, no
    model instance per sample). A concurrent upload with the same key loses the race and
    returns the winner's submission."""
    from evaluator.bulk import insert_rows
    from evaluator.pipeline import schedule_submission
    try:
        with transaction.atomic():
            submission.save()
            if rows is not None:
                sid = submission.pk
                insert_rows(Candidate, _TRACE_COLUMNS, ((sid, *row) for row in rows))
            else:
                for c in candidates:
                    c.submission = submission
                Candidate.objects.bulk_create(candidates, batch_size=1000)
            schedule_submission(submission)
    except IntegrityError:
        first = existing_upload(submission.team, submission.upload_key)
        if first is None:
            raise
        first.was_duplicate = True
        return first
    submission.was_duplicate = False
    return submission


def create_kernel_submission(team, user, hardware, meta: dict, files: Iterable[Upload | tuple]) -> Submission:
    """A kernel submission: one source per workload. ``hardware`` is a HardwareTarget or slug;
    ``meta`` has method (required), model_name (or model), framework, description, link,
    upload_key; ``files`` are :class:`Upload` objects or ``(name, bytes|str)`` pairs, where a
    ``.zip`` is expanded. Returns the submission (``was_duplicate`` tells a retried upload_key)."""
    check_team(team, user)
    meta, errors = clean_meta(meta)
    if errors:
        raise IntakeError(errors)
    first = existing_upload(team, meta["upload_key"])
    if first is not None:
        first.was_duplicate = True
        return first
    hw = resolve_hardware(hardware)
    catalog, pk_of = workload_catalog()
    uploads = [f if isinstance(f, Upload) else Upload(f[0], f[1]) for f in files]
    kernels, errors = validate_kernel_uploads(uploads, catalog)
    if errors:
        raise IntakeError(errors)
    submission = Submission(team=team, created_by=user, hardware=hw, kind=Submission.KERNELS,
                            method=meta["method"], model_name=meta["model_name"],
                            framework=meta["framework"], description=meta["description"],
                            link=meta["link"], upload_key=meta["upload_key"], budget=1,
                            sampling=Submission.INDEPENDENT)
    candidates = [Candidate(workload_id=pk_of[k.wid], index=0, filename=k.name[:200], code=k.code,
                            code_sha256=hashlib.sha256(k.code.encode()).hexdigest())
                  for k in sorted(kernels, key=lambda k: pk_of[k.wid])]
    return _store(submission, candidates)


def create_trace_submission(team, user, stream, upload_key: str | None = None) -> Submission:
    """An agent trace (``jaxbench-trace/1`` JSON Lines) from a binary stream, parsed line by line.
    ``upload_key`` (or the header's) makes a retried upload return the first submission."""
    check_team(team, user)
    if upload_key not in (None, "") and (not isinstance(upload_key, str) or not _UPLOAD_KEY_RE.match(upload_key)):
        raise IntakeError("1-128 characters: letters, digits and ._:/+=-, starting with a letter or digit",
                          field="upload_key")
    first = existing_upload(team, upload_key)
    if first is not None:
        first.was_duplicate = True
        return first
    from evaluator.models import HardwareTarget
    catalog, pk_of = workload_catalog()
    try:
        trace = trace_format.parse_trace(stream, catalog, HardwareTarget.objects.values_list("slug", flat=True))
    except trace_format.TraceError as exc:
        raise IntakeError(exc.errors) from None
    h = trace.header
    key = upload_key or h.get("upload_key")
    if upload_key and h.get("upload_key") and h["upload_key"] != upload_key:
        raise IntakeError([{"line": 1, "field": "upload_key",
                            "message": f"the header's upload_key {h['upload_key']!r} differs from the one "
                                       f"given with the upload {upload_key!r}"}])
    if key and not upload_key:
        first = existing_upload(team, key)
        if first is not None:
            first.was_duplicate = True
            return first
    hw = HardwareTarget.objects.get(slug=h["hardware"])
    submission = Submission(team=team, created_by=user, hardware=hw, kind=Submission.TRACE,
                            method=h["method"], model_name=h["model"], framework=h.get("framework") or "",
                            description=h.get("description") or "", link=h.get("link") or "",
                            sampling=h["sampling"], budget=h.get("budget"),
                            trace_settings=h.get("settings") or {}, upload_key=key or None)
    sha = hashlib.sha256
    rows = [(pk_of[s["workload_id"]], s["index"], s.get("round"), s.get("parent"), s["code"],
             sha(s["code"].encode()).hexdigest(), s.get("outcome") or "", s.get("speedup"),
             s.get("speedup_lo"), s.get("speedup_hi"), s.get("tokens_in"), s.get("tokens_out"), s.get("cost_usd"))
            for s in trace.samples]
    return _store(submission, rows=rows)


def teams_for(user):
    """The teams ``user`` can submit for."""
    from portal.models import Team
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user).distinct().order_by("name")


def resolve_team(user, slug: str | None = None):
    """The team to submit for: the one named, or the user's only team."""
    teams = list(teams_for(user))
    if slug:
        for t in teams:
            if t.slug == slug:
                return t
        mine = ", ".join(t.slug for t in teams) or "none"
        raise IntakeError(f"you are not a member of a team {slug!r} (your teams: {mine})", field="team")
    if len(teams) == 1:
        return teams[0]
    if not teams:
        raise IntakeError("you are in no team: every submission belongs to a team; create one at "
                          "/teams/new/ or join one at /teams/join/", field="team")
    raise IntakeError(f"you are in several teams ({', '.join(t.slug for t in teams)}): say which with "
                      f"'team'", field="team")
