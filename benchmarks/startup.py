"""Start-up, measured from a fresh clone: clones this repository into a temporary directory, runs
``make run`` there (its own .venv and var/ unless --reuse-venv), polls the URL until it answers
200, and prints a table of the phases, each read from the command's own lines (the install steps'
``[install ...] done in N s``, the portal's ``[start-up] step: N s``, ``[worker] ready after N s``)
with the wall-clock second at which it ended.

    .venv/bin/python benchmarks/startup.py                 # fresh .venv: installs as a new user would
    .venv/bin/python benchmarks/startup.py --reuse-venv    # the portal's own start-up only
    .venv/bin/python benchmarks/startup.py --demo          # also wait for the demo to finish
    .venv/bin/python benchmarks/startup.py --demo --command "make run RUN_ARGS=--quick-demo"

Asserts nothing; stops the portal (Ctrl-C) at the end and removes the clone unless --keep.
Standard library only.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
INSTALL_DONE = re.compile(r"^\[install (?P<step>[^\]]+)\] (?:done|FAILED[^)]*\)) in (?P<seconds>[\d.]+) s")
STEP = re.compile(r"^\[start-up\] (?P<step>[^:]+): (?P<seconds>[\d.]+) s")
READY = re.compile(r"^\[start-up\] JAXBench Portal at (?P<url>\S+) : ready in (?P<seconds>[\d.]+) s")
WORKER = re.compile(r"^\[worker\] ready after (?P<seconds>[\d.]+) s")
DEMO_DONE = re.compile(r"demo complete in (?P<minutes>[\d.]+) min")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Reader(threading.Thread):
    """Reads the command's output, keeps each line with the second it arrived, and records the
    phases it names; with --echo it copies the output through."""

    def __init__(self, stream, t0: float, echo: bool):
        super().__init__(daemon=True)
        self.stream, self.t0, self.echo = stream, t0, echo
        self.lines: list[tuple[float, str]] = []
        self.phases: list[tuple[str, float, float]] = []  # (phase, its own seconds, wall second at its end)
        self.demo_done: float | None = None
        self.first_install: float | None = None

    def run(self) -> None:
        buf = b""
        for chunk in iter(lambda: self.stream.read1(65536), b""):
            if self.echo:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
            buf += chunk
            *complete, buf = re.split(rb"[\r\n]", buf)
            for raw in complete:
                self.take(raw.decode(errors="replace").strip())

    def take(self, line: str) -> None:
        if not line:
            return
        at = time.monotonic() - self.t0
        self.lines.append((at, line))
        if line.startswith("[install") and self.first_install is None:
            self.first_install = at
        if m := INSTALL_DONE.match(line):
            self.phases.append((f"install: {m['step']}", float(m["seconds"]), at))
        elif m := READY.match(line):
            self.phases.append(("start-up total (portal's own)", float(m["seconds"]), at))
        elif m := STEP.match(line):
            self.phases.append((m["step"], float(m["seconds"]), at))
        elif m := WORKER.match(line):
            self.phases.append(("worker ready (after it started)", float(m["seconds"]), at))
        elif m := DEMO_DONE.search(line):
            self.demo_done = at
            self.phases.append(("demo", float(m["minutes"]) * 60, at))


def copy_changes(clone: pathlib.Path) -> None:
    """The working tree's modified and untracked files over the clone; its deleted ones removed."""
    listed = subprocess.run(
        ["git", "ls-files", "-m", "-o", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        src, dst = ROOT / name, clone / name
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        else:
            dst.unlink(missing_ok=True)


def first_page(url: str, proc: subprocess.Popen, t0: float, timeout: float) -> float | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return time.monotonic() - t0
        except OSError:
            pass
        time.sleep(0.25)
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--command", default="make run")
    ap.add_argument("--clone", default=None, help="where to clone (default: a new temporary directory)")
    ap.add_argument("--reuse-venv", action="store_true", help="link this checkout's .venv into the clone")
    ap.add_argument(
        "--working-tree", action="store_true", help="copy this checkout's uncommitted changes into the clone"
    )
    ap.add_argument("--demo", action="store_true", help="also wait until the demo completes")
    ap.add_argument("--timeout", type=float, default=900, help="seconds for the first page")
    ap.add_argument("--demo-timeout", type=float, default=3600)
    ap.add_argument("--echo", action="store_true", help="copy the command's output through")
    ap.add_argument("--keep", action="store_true", help="keep the clone")
    args = ap.parse_args()

    tmp = pathlib.Path(args.clone) if args.clone else pathlib.Path(tempfile.mkdtemp(prefix="jaxbench-startup-"))
    clone = tmp / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    if args.working_tree:
        copy_changes(clone)
    if args.reuse_venv:
        (clone / ".venv").symlink_to(ROOT / ".venv")
        # older than the venv's stamps: make must not reinstall into the shared .venv (its
        # editable install of the harness would then point at this temporary clone)
        for name in ("requirements.txt", "requirements-test.txt"):
            os.utime(clone / name, (0, 0))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JAXBENCH_", "DJANGO_", "DATABASE_URL", "DRAMATIQ_", "PYTEST"))
    }
    env["JAXBENCH_BIND"] = f"127.0.0.1:{port}"
    load = os.getloadavg()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        args.command,
        shell=True,
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    reader = Reader(proc.stdout, t0, args.echo)
    reader.start()
    page = demo = None
    try:
        page = first_page(url, proc, t0, args.timeout)
        # then the rest of start-up: its last line, and the worker's ready line
        end = time.monotonic() + 300
        while time.monotonic() < end and proc.poll() is None and page is not None:
            if any(n.startswith("worker ready") for n, _, _ in reader.phases):
                break
            time.sleep(0.5)
        if args.demo and page is not None:
            end = time.monotonic() + args.demo_timeout
            while reader.demo_done is None and time.monotonic() < end and proc.poll() is None:
                time.sleep(1)
            demo = reader.demo_done
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        reader.join(10)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print()
    print(
        f"`{args.command}` in a fresh clone ({'reused .venv' if args.reuse_venv else 'new .venv'}); "
        f"{os.cpu_count()} CPUs, load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"{time.strftime('%Y-%m-%d %H:%M')}"
    )
    print(f"{'phase':<42} {'own s':>8} {'ends at s':>10}")
    print("-" * 62)
    for name, seconds, at in reader.phases:
        print(f"{name:<42} {seconds:>8.1f} {at:>10.1f}")
    print("-" * 62)
    installs = sum(s for n, s, _ in reader.phases if n.startswith("install:"))
    print(f"{'installs, all steps':<42} {installs:>8.1f}")
    print(f"{'first page (GET / answered 200)':<42} {'':>8} {page if page is not None else float('nan'):>10.1f}")
    if page is not None and installs:
        print(f"{'first page, not counting the installs':<42} {page - installs:>8.1f}")
    if args.demo:
        print(f"{'demo complete':<42} {'':>8} {demo if demo is not None else float('nan'):>10.1f}")
    if page is None:
        print("no first page; the output's last lines:")
        for at, line in reader.lines[-20:]:
            print(f"{at:8.1f}  {line[:160]}")


if __name__ == "__main__":
    main()
