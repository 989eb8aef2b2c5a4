# expect: rejected returns_input | rejected artifact_tampered
"""Rewrites its artifact after it is written: a thread started at import waits for the export
child's ``program.jaxexport`` and replaces it with a plain-XLA RMSNorm it exported itself (right
answers), then keeps appending to it, until the process dies. The program traced is a Pallas
copy (wrong answers).

What the defence gives: the rewrite never reaches what is timed. The trusted side reads each
artifact once, the moment the child says it is complete, and checks it against the size and
digest of the bytes the child wrote: a file changed before that read is ``rejected``
(``artifact_tampered``); one changed after it is never read again (the timer gets the trusted
side's copy), and the traced copy kernel is what runs: its outputs are its input ``x``, which the
check rejects (``returns_input``). Which of the two it gets is this attack's own race (whether its
thread's rewrite lands before the read), decided by the candidate's process, not by the portal:
both are rejections, and neither lets the forged program be timed or judged.
"""
import os
import sys
import threading
import time

import jax

from ._honest_rmsnorm import _row_blocked  # inlined on upload: see _honest_rmsnorm.py
from ._wrong_or_xla import _copy_kernel, _xla  # inlined on upload: see _wrong_or_xla.py


def _rewrite():
    main = sys.modules["__main__"]
    specs = main.input_specs(main.json.load(open(main.OPTS["in"] + "/manifest.json")))
    forged = jax.export.export(jax.jit(_xla), platforms=["tpu"])(*specs).serialize()
    path = os.path.join(main.OPTS["work"], "artifacts", "program.jaxexport")
    end = time.time() + 600
    while time.time() < end:
        if os.path.exists(path):
            try:
                with open(path, "wb") as f:
                    f.write(forged)
                with open(path, "ab") as f:
                    f.write(b"\0" * 64)
            except OSError:
                pass
        time.sleep(0.0005)


threading.Thread(target=_rewrite, daemon=True).start()


def workload(x, scale):
    return _row_blocked(_copy_kernel, x, scale)
