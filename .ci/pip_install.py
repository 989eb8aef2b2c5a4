"""One install step of the Makefile, with progress: a header saying what is installed and how long
it usually takes, pip's own progress bars (downloads, then "Installing collected packages"), and
a footer with the time it took. pip's "Requirement already satisfied" lines are counted, not
printed (a step that re-reads requirements.txt would print one per package).

    python .ci/pip_install.py --step 2/3 --what "the runtime (Django, Dramatiq, JAX, ...)" \
        --about "about 25 s from a local index, 1-4 min downloading" -- <pip install arguments>

Standard library only: it runs before anything is installed. On a terminal pip runs in a
pseudo-terminal so that its bars animate; in a log it runs on a pipe (pip then prints its
"Collecting"/"Downloading" lines and a final bar, no animation)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

SATISFIED = b"Requirement already satisfied"


class LineFilter:
    """Forwards pip's output as it comes, holding back only a line that may turn out to be a
    'Requirement already satisfied' line until its end shows which it is."""

    def __init__(self, out):
        self.out = out
        self.pending = b""
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        while data:
            cut = data.find(b"\n")
            piece, data = (data, b"") if cut < 0 else (data[: cut + 1], data[cut + 1 :])
            line = self.pending + piece
            if line.startswith(SATISFIED):
                self.pending = b"" if piece.endswith(b"\n") else line
                if piece.endswith(b"\n"):
                    self.dropped += 1
                continue
            if SATISFIED.startswith(line):  # too short to tell yet
                self.pending = line
                continue
            self.pending = b""
            self.out.write(line)
        self.out.flush()

    def close(self) -> None:
        if self.pending and not self.pending.startswith(SATISFIED):
            self.out.write(self.pending)
        self.pending = b""
        self.out.flush()


def run_pip(cmd: list[str], out) -> tuple[int, int]:
    """Run ``cmd``; returns (exit status, satisfied lines dropped)."""
    filt = LineFilter(out)
    if os.isatty(out.fileno()):
        import fcntl
        import pty
        import struct
        import termios

        master, slave = pty.openpty()
        # the bars' width: the pseudo-terminal gets the real terminal's size
        size = os.get_terminal_size(out.fileno())
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size.lines, size.columns, 0, 0))
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            filt.feed(data)
        os.close(master)
    else:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        for data in iter(lambda: proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            filt.feed(data)
    filt.close()
    return proc.wait(), filt.dropped


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        raise SystemExit("usage: pip_install.py --step N/M --what TEXT [--about TEXT] -- PIP-INSTALL-ARGS")
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--step", required=True)
    ap.add_argument("--what", required=True)
    ap.add_argument("--about", default="")
    ap.add_argument("--python", default=sys.executable, help="the interpreter whose pip installs")
    opts = ap.parse_args(argv[:cut])
    out = sys.stdout.buffer
    about = f" ({opts.about})" if opts.about else ""
    out.write(f"[install {opts.step}] {opts.what}{about}\n".encode())
    out.flush()
    t0 = time.monotonic()
    cmd = [opts.python, "-m", "pip", "install", "--progress-bar", "on", *argv[cut + 1 :]]
    status, dropped = run_pip(cmd, out)
    took = time.monotonic() - t0
    already = f"; {dropped} already installed" if dropped else ""
    verdict = "done" if status == 0 else f"FAILED (pip exited with {status})"
    out.write(f"[install {opts.step}] {verdict} in {took:.1f} s{already}\n".encode())
    out.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
