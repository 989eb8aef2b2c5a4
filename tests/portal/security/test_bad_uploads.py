"""Hostile uploads over the wire: the REST API with a real Bearer token. Each is refused with a
clear 4xx that explains why, and nothing is stored (rows counted before and after).

What tests/submissions already covers (API bodies that are not JSON or multipart, a 2 MB kernel
file, a 300 KB JSON kernel, a trace with a lying Content-Length, unsafe member names and a
declared-size zip bomb at the intake level) is not repeated; this file covers the edges around
them: exact size limits, trace limits reached while streaming, zip bombs that lie about their
sizes or hide in their compression method or their number of members or directory entries,
traversal names over the API, non-UTF-8 bytes in every channel, truncated traces and huge
single lines."""

import binascii
import io
import json
import struct
import tracemalloc
import zipfile
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jaxbench import traces as trace_format
from jaxbench.traces import FORMAT
from submissions import intake
from tests.portal.security.conftest import counts
from tests.submissions.conftest import kernel, make_zip

pytestmark = pytest.mark.django_db
NDJSON = "application/x-ndjson"
MB = 1024 * 1024


@pytest.fixture
def post(client, catalog, member):
    """POST with the member's token; asserts a 4xx that explains itself and stores nothing
    unless ``expect`` is a 2xx."""

    def send(path, data=None, content_type=None, expect=400, **extra):
        before = counts()
        kw = dict(member.auth, **extra)
        if content_type:
            kw["content_type"] = content_type
        r = client.post(path, data if data is not None else {}, **kw)
        assert r.status_code == expect, (r.status_code, r.content[:1000])
        body = r.json()
        if expect >= 400:
            assert counts() == before, "a refused upload stored rows"
            assert body.get("detail"), body
            assert all(e.get("message") for e in body.get("errors", [])), body
        return body

    return send


def messages(body) -> str:
    return " | ".join([body.get("detail", "")] + [trace_format.format_error(e) for e in body.get("errors", [])])


def files_upload(*files, **meta):
    return {"hardware": "cpu", "method": "Hand-written", "files": list(files), **meta}


def zip_upload(data: bytes, name="kernels.zip"):
    return {"hardware": "cpu", "method": "Hand-written", "zip": SimpleUploadedFile(name, data, "application/zip")}


class PeakMemory:
    """The peak of Python allocations inside the block (tracemalloc)."""

    def __enter__(self):
        tracemalloc.start()
        return self

    def __exit__(self, *exc):
        self.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


# -- size limits --------------------------------------------------------------------------


def padded_kernel(size: int) -> bytes:
    """A valid kernel padded with a comment to exactly ``size`` bytes."""
    code = kernel().encode() + b"#"
    return code + b"x" * (size - len(code) - 1) + b"\n"


def test_kernel_file_at_the_limit_is_taken_one_byte_more_is_refused(post):
    at = padded_kernel(intake.MAX_KERNEL_BYTES)
    assert len(at) == intake.MAX_KERNEL_BYTES
    over = padded_kernel(intake.MAX_KERNEL_BYTES + 1)
    body = post("/api/v1/submissions/", files_upload(SimpleUploadedFile("12p.py", over)))
    assert [(e["file"], e["field"]) for e in body["errors"]] == [("12p.py", "size")]
    assert "larger than 256 KB" in body["errors"][0]["message"]
    post("/api/v1/submissions/", files_upload(SimpleUploadedFile("12p.py", at)), expect=201)


def test_the_kernel_limit_counts_utf8_bytes_not_characters(post):
    """A JSON kernel under the limit in characters but over it in UTF-8 bytes."""
    code = kernel() + "# " + "é" * (intake.MAX_KERNEL_BYTES // 2) + "\n"
    assert len(code) < intake.MAX_KERNEL_BYTES < len(code.encode())
    body = post(
        "/api/v1/submissions/",
        json.dumps({"hardware": "cpu", "method": "m", "kernels": {"12p": code}}),
        content_type="application/json",
    )
    assert body["errors"][0]["field"] == "size"


def test_a_huge_kernel_upload_is_refused_before_its_body_is_parsed(post, monkeypatch):
    """Multipart files are spooled to disk while parsing: a declared size over what a kernel
    upload can hold is refused first (413), as the trace endpoint does."""
    from django.http import multipartparser

    monkeypatch.setattr(
        multipartparser.MultiPartParser, "parse", lambda self: pytest.fail("the body of an oversized upload was parsed")
    )
    body = post(
        "/api/v1/submissions/",
        files_upload(SimpleUploadedFile("12p.py", kernel().encode())),
        expect=413,
        CONTENT_LENGTH=str(10**10),
    )
    assert "at most" in body["detail"] and "MB" in body["detail"]


@pytest.fixture
def small_trace_limit(monkeypatch):
    """The trace limit, 128 MB, lowered to 1 MB for the API's check and the streaming parser."""
    monkeypatch.setattr("jaxbench.limits.MAX_TRACE_BYTES", MB)
    monkeypatch.setattr(trace_format.iter_lines, "__defaults__", (trace_format.MAX_LINE_BYTES, MB))
    return MB


HEADER = {
    "format": FORMAT,
    "method": "Best-of-N",
    "model": "Gemini 3 Flash",
    "hardware": "cpu",
    "sampling": "independent",
}


def trace_of(n_samples: int, code_size: int = 100) -> bytes:
    lines = [json.dumps(HEADER)] + [
        json.dumps({"workload": "12p", "index": i, "code": "#" * code_size}) for i in range(n_samples)
    ]
    return ("\n".join(lines) + "\n").encode()


def test_a_trace_over_the_limit_is_refused_while_streaming(post, small_trace_limit):
    """Within the Content-Length slack, the parser stops at the limit and names the line."""
    data = trace_of(14, code_size=100 * 1024)  # ~1.4 MB: over 1 MB, under 1 MB + 1 MB
    assert small_trace_limit < len(data) < 2 * small_trace_limit
    body = post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    err = [e for e in body["errors"] if "larger than 1 MB" in e["message"]]
    assert err and 9 <= err[0]["line"] <= 12, body["errors"]
    upload = {"trace": SimpleUploadedFile("big.jsonl", data)}
    body = post("/api/v1/submissions/trace/", upload)
    assert any("larger than 1 MB" in e["message"] for e in body["errors"])


def test_a_trace_far_over_the_limit_is_refused_by_its_declared_size(post, small_trace_limit):
    data = trace_of(30, code_size=100 * 1024)  # ~3 MB: over the limit and its slack
    body = post("/api/v1/submissions/trace/", data, content_type=NDJSON, expect=413)
    assert body["detail"] == "A trace is at most 1 MB."
    body = post("/api/v1/submissions/trace/", {"trace": SimpleUploadedFile("big.jsonl", data)}, expect=413)
    assert "at most 1 MB" in body["detail"]


# -- zip bombs ----------------------------------------------------------------------------


def raw_zip(members) -> bytes:
    """A zip written byte by byte, so that it can lie: ``members`` are ``(name, method,
    compressed bytes, crc32, declared uncompressed size)``."""
    out, directory = io.BytesIO(), io.BytesIO()
    for name, method, payload, crc, size in members:
        fname = name.encode()
        offset = out.tell()
        out.write(
            struct.pack("<IHHHHHIIIHH", 0x04034B50, 46, 0, method, 0, 0x21, crc, len(payload), size, len(fname), 0)
            + fname
            + payload
        )
        directory.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                46,
                46,
                0,
                method,
                0,
                0x21,
                crc,
                len(payload),
                size,
                len(fname),
                0,
                0,
                0,
                0,
                0o644 << 16,
                offset,
            )
            + fname
        )
    cd = directory.getvalue()
    n = len(members)
    return out.getvalue() + cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, len(cd), out.tell(), 0)


# 256 MB of zeros, bzip2-compressed to 208 bytes (bz2.compress(b"\0" * 2**28, 9)). zipfile
# decompresses bzip2 and LZMA a whole input chunk at a time, without an output limit.
BZIP2_256MB_OF_ZEROS = binascii.unhexlify(
    "425a68393141592653590e09e2df015f8e4000c0000008200030804d4642a025a90a809"
    + "73141592653590e09e2df015f8e4000c0000008200030804d4642a025a90a809" * 4
    + "73141592653591ecee4db012a3fc000c0040008200030cc0529a6aaa8491b002248f1772453850906b17caf00"
)
TEN_ZEROS_CRC = zlib.crc32(b"\0" * 10)


def deflated(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def test_the_bzip2_constant_is_what_it_claims():
    import bz2

    d = bz2.BZ2Decompressor()
    assert len(d.decompress(BZIP2_256MB_OF_ZEROS, max_length=MB)) == MB and not d.eof


@pytest.mark.parametrize("declared", [10, 256 * MB])
def test_a_bzip2_bomb_is_refused_without_decompressing(post, declared):
    """208 bytes that expand to 256 MB, declared as 10 bytes (with the CRC of 10 zeros, so that
    zipfile would hand them over) or honestly."""
    bomb = raw_zip(
        [("12p.py", zipfile.ZIP_BZIP2, BZIP2_256MB_OF_ZEROS, TEN_ZEROS_CRC if declared == 10 else 0, declared)]
    )
    assert len(bomb) < 1024
    with PeakMemory() as mem:
        body = post("/api/v1/submissions/", zip_upload(bomb))
    assert mem.peak < 32 * MB, f"{mem.peak / MB:.0f} MB allocated: the member was decompressed"
    assert any(
        e["field"] == "archive"
        and "unsupported compression method 12" in e["message"]
        and e["file"] == "kernels.zip: 12p.py"
        for e in body["errors"]
    ), body


def test_a_deflate_member_that_understates_its_size_is_cut_at_the_declared_size(post):
    """16 MB of zeros declared as 10 bytes: zipfile stops at the declared size and the CRC of
    what it read does not match, so the member is refused without being inflated."""
    payload = deflated(b"\0" * (16 * MB))
    bomb = raw_zip([("12p.py", zipfile.ZIP_DEFLATED, payload, zlib.crc32(b"\0" * (16 * MB)), 10)])
    with PeakMemory() as mem:
        body = post("/api/v1/submissions/", zip_upload(bomb))
    assert mem.peak < 8 * MB
    assert any(e["file"] == "kernels.zip: 12p.py" and "cannot be extracted" in e["message"] for e in body["errors"]), (
        body
    )


def many_members(n: int, size: int) -> bytes:
    """``n`` kernel members of ``size`` zeros each, under a workload folder, deflated once."""
    payload, crc = deflated(b"#" * size), zlib.crc32(b"#" * size)
    return raw_zip([(f"12p_RMSNorm/k{i}.py", zipfile.ZIP_DEFLATED, payload, crc, size) for i in range(n)])


def test_many_small_members_are_refused_before_any_is_read(post):
    """201 members of 256 KB: 50 MB uncompressed from a zip of ~100 KB. Before, every member
    was read into memory before the count was checked."""
    bomb = many_members(intake.MAX_FILES + 1, intake.MAX_KERNEL_BYTES)
    assert len(bomb) < 200 * 1024
    with PeakMemory() as mem:
        body = post("/api/v1/submissions/", zip_upload(bomb))
    assert mem.peak < 16 * MB, f"{mem.peak / MB:.0f} MB allocated"
    assert any(f"more than {intake.MAX_FILES} kernel files" in e["message"] for e in body["errors"]), body


def test_members_that_add_up_to_too_much_are_refused_before_any_is_read(post):
    n = intake.MAX_ZIP_UNCOMPRESSED // intake.MAX_KERNEL_BYTES + 1  # 129 x 256 KB > 32 MB
    assert n <= intake.MAX_FILES
    bomb = many_members(n, intake.MAX_KERNEL_BYTES)
    with PeakMemory() as mem:
        body = post("/api/v1/submissions/", zip_upload(bomb))
    assert mem.peak < 16 * MB, f"{mem.peak / MB:.0f} MB allocated"
    assert any(
        e["field"] == "size" and "add up to more than 32 MB uncompressed" in e["message"] for e in body["errors"]
    ), body


def test_a_huge_central_directory_is_refused_before_it_is_parsed(post):
    """100,000 empty entries (4.6 MB): zipfile would build an object for each (seconds and
    ~50 MB; a 30 MB archive costs ~6 s and ~300 MB) before the entry count was checked."""
    one = raw_zip([("a", zipfile.ZIP_STORED, b"", 0, 0)])
    eocd = one.rindex(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack("<II", one[eocd + 12 : eocd + 20])
    entry = one[cd_offset : cd_offset + cd_size]
    n = 100_000
    bomb = (
        one[:cd_offset]
        + entry * n
        + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, cd_size * n, cd_offset, 0)
    )
    with PeakMemory() as mem:
        body = post("/api/v1/submissions/", zip_upload(bomb))
    assert mem.peak < 24 * MB, f"{mem.peak / MB:.0f} MB allocated"
    assert any(e["field"] == "archive" and "more than 2000 entries" in e["message"] for e in body["errors"]), body


def test_an_honest_archive_still_works(post):
    ok = make_zip({"12p_RMSNorm/kernel.py": kernel(), "8p.py": kernel("b"), "notes/log.txt": "x" * MB})
    body = post("/api/v1/submissions/", zip_upload(ok), expect=201)
    assert body["candidates"] == 2


# -- path traversal -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, needle",
    [
        ("../../etc/passwd.py", "climbs out"),
        ("12p_RMSNorm/../../../../etc/12p.py", "climbs out"),
        ("..", "climbs out"),
        ("/etc/passwd.py", "absolute"),
        ("/12p.py", "absolute"),
        ("C:/Windows/12p.py", "absolute"),
        ("..\\..\\12p.py", "backslashes"),
        ("\\\\server\\share\\12p.py", "backslashes"),
        ("12p.py\x00.txt", "NUL"),
    ],
)
def test_traversal_names_in_zip_members_reject_the_whole_upload(post, name, needle):
    data = raw_zip(
        [
            (name, zipfile.ZIP_STORED, kernel().encode(), zlib.crc32(kernel().encode()), len(kernel())),
            ("8p.py", zipfile.ZIP_STORED, kernel().encode(), zlib.crc32(kernel().encode()), len(kernel())),
        ]
    )
    body = post("/api/v1/submissions/", zip_upload(data))
    paths = [e for e in body["errors"] if e["field"] == "path"]
    assert len(paths) == 1 and needle in paths[0]["message"] and paths[0]["input"] == "zip", body


@pytest.mark.parametrize("filename", ["../../etc/passwd.py", "/etc/passwd.py", "..\\..\\passwd.py"])
def test_traversal_names_of_uploaded_files_are_not_kept(post, filename):
    body = post("/api/v1/submissions/", files_upload(SimpleUploadedFile(filename, kernel().encode())))
    assert [e["field"] for e in body["errors"]] == ["name"]
    assert "/" not in body["errors"][0]["file"] and "\\" not in body["errors"][0]["file"]


def test_a_traversal_name_that_names_a_workload_is_stored_by_its_base_name(post):
    from submissions.models import Candidate

    post("/api/v1/submissions/", files_upload(SimpleUploadedFile("../../../12p.py", kernel().encode())), expect=201)
    assert list(Candidate.objects.values_list("filename", flat=True)) == ["12p.py"]


# -- not UTF-8 ----------------------------------------------------------------------------

NOT_UTF8 = {
    "latin-1": "# café\n".encode("latin-1") + kernel().encode(),
    "utf-16": kernel().encode("utf-16"),
    "utf-8 surrogate": b"# \xed\xa0\x80\n" + kernel().encode(),
    "overlong": b"# \xc0\xaf\n" + kernel().encode(),
    "truncated sequence": kernel().encode() + b"# \xe2\x82",
}


@pytest.mark.parametrize("kind", NOT_UTF8)
def test_non_utf8_kernels_are_refused_in_files_and_zips(post, kind):
    data = NOT_UTF8[kind]
    body = post("/api/v1/submissions/", files_upload(SimpleUploadedFile("12p.py", data)))
    assert [(e["file"], e["field"]) for e in body["errors"]] == [("12p.py", "encoding")]
    assert "not UTF-8" in body["errors"][0]["message"]
    body = post("/api/v1/submissions/", zip_upload(make_zip({"12p_RMSNorm/kernel.py": data})))
    assert [(e["file"], e["field"]) for e in body["errors"]] == [("kernels.zip: 12p_RMSNorm/kernel.py", "encoding")]


def header_line() -> bytes:
    return json.dumps(HEADER).encode() + b"\n"


def sample_line(i=0, code="def workload(x):\n    return x\n") -> bytes:
    return json.dumps({"workload": "12p", "index": i, "code": code}).encode() + b"\n"


@pytest.mark.parametrize(
    "data, line, needle",
    [
        (header_line().replace(b"Best-of-N", "Bést-of-N".encode("latin-1")) + sample_line(), 1, "not UTF-8"),
        (header_line() + sample_line().replace(b"return x", b"return \xed\xa0\x80"), 2, "not UTF-8"),
        (header_line() + sample_line() + sample_line(1).replace(b"return", b"\xc0\xafreturn"), 3, "not UTF-8"),
        (header_line() + sample_line(code="x = '\ud800'"), 2, "lone surrogate"),
        ((header_line() + sample_line()).decode().encode("utf-16"), 1, None),
    ],
)
@pytest.mark.parametrize("channel", ["raw", "multipart"])
def test_non_utf8_traces_are_refused_naming_the_line(post, data, line, needle, channel):
    if channel == "raw":
        body = post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    else:
        body = post("/api/v1/submissions/trace/", {"trace": SimpleUploadedFile("t.jsonl", data)})
    assert any(e["line"] == line and (needle is None or needle in e["message"]) for e in body["errors"]), body


# -- truncated traces ---------------------------------------------------------------------


def full_trace() -> bytes:
    code = 'def workload(x):\n    """naïve — ✓"""\n    return x * 2.5\n'
    return (
        header_line()
        + sample_line(0, code)
        + json.dumps(
            {
                "workload": "12p",
                "index": 1,
                "parent": 0,
                "code": code,
                "outcome": "correct_faster",
                "speedup": 1.25,
                "cost_usd": 0.0031,
            },
            ensure_ascii=False,
        ).encode()
        + b"\n"
    )


def cut_positions(data: bytes) -> list[int]:
    """Cuts inside lines: after every 23rd byte, inside a multi-byte character, right after an
    escape's backslash, inside a number and just before a line's closing brace."""
    ends = {i for i, b in enumerate(data) if b == ord("\n")}
    cuts = set(range(1, len(data), 23))
    cuts.add(data.index("—".encode()) + 1)
    cuts.add(data.index(b"\\n") + 1)
    cuts.add(data.index(b"1.25") + 2)
    cuts.update(e - 1 for e in ends)
    return sorted(c for c in cuts if c not in ends and c - 1 not in ends and data[c - 1] != ord("}"))


def test_traces_cut_inside_a_line_are_refused_naming_that_line(post):
    data = full_trace()
    post("/api/v1/submissions/trace/", data, content_type=NDJSON, expect=201)  # the whole is valid
    from submissions.models import Submission

    Submission.objects.all().delete()
    cuts = cut_positions(data)
    assert len(cuts) > 15
    for cut in cuts:
        part = data[:cut]
        line = part.count(b"\n") + 1
        body = post("/api/v1/submissions/trace/", part, content_type=NDJSON)
        assert any(
            e["line"] == line
            and e["field"] is None
            and ("not valid JSON" in e["message"] or "not UTF-8" in e["message"])
            for e in body["errors"]
        ), (cut, part[-40:], body)


def test_a_trace_cut_after_its_header_has_no_samples(post):
    body = post("/api/v1/submissions/trace/", header_line(), content_type=NDJSON)
    assert "header but no samples" in messages(body)
    body = post("/api/v1/submissions/trace/", header_line()[:-1], content_type=NDJSON)
    assert "header but no samples" in messages(body)


# -- huge single lines ----------------------------------------------------------------------


def huge_sample(i: int, size: int) -> bytes:
    return json.dumps({"workload": "12p", "index": i, "code": "#" * size}).encode() + b"\n"


@pytest.mark.parametrize(
    "layout, line", [("sample", 2), ("header", 1), ("last, no newline", 3), ("garbage, no newline at all", 1)]
)
def test_a_huge_single_line_is_refused_naming_it(post, layout, line):
    big = 3 * MB
    if layout == "sample":
        data = header_line() + huge_sample(0, big) + sample_line(0)
    elif layout == "header":
        data = json.dumps({**HEADER, "description": "d" * big}).encode() + b"\n" + sample_line(0)
    elif layout == "last, no newline":
        data = header_line() + sample_line(0) + huge_sample(1, big)[:-1]
    else:
        data = b"a" * big
    body = post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    long = [e for e in body["errors"] if "line longer than 2 MB" in e["message"]]
    assert [e["line"] for e in long] == [line], body["errors"]


def test_a_huge_line_is_skipped_not_held(post):
    """A 24 MB line: the parser keeps at most the 2 MB cap of it (the test client's copy of the
    body is the rest of the peak)."""
    data = header_line() + huge_sample(0, 24 * MB) + sample_line(0)
    with PeakMemory() as mem:
        body = post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    assert [e["line"] for e in body["errors"]] == [2]
    assert mem.peak < len(data) + 12 * MB, f"{mem.peak / MB:.0f} MB allocated for a {len(data) / MB:.0f} MB body"


def test_a_code_field_over_its_limit_within_a_line(post):
    data = header_line() + huge_sample(0, trace_format.MAX_CODE_CHARS + 1)
    body = post("/api/v1/submissions/trace/", data, content_type=NDJSON)
    assert [(e["line"], e["field"]) for e in body["errors"]] == [(2, "code")]
    assert "too long" in body["errors"][0]["message"]
