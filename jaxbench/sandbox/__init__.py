"""The sandbox: one fresh, isolated child process per candidate (trusted side).

Layers, strongest first; each is probed on this machine and every record lists exactly the
layers that were active (:func:`available_protections` reports what this machine offers):

* bubblewrap: new user, PID, network, IPC, UTS, cgroup and mount namespaces
  (``--unshare-all --unshare-user``), ``--disable-userns`` (no nested user namespaces),
  ``--die-with-parent``, ``--new-session``, ``--cap-drop ALL``, ``--clearenv``; a root
  filesystem holding only read-only binds of the system libraries, the interpreter and its
  standard library, an allowlist of the virtual environment's packages (jax, jaxlib, numpy,
  ml_dtypes, ...; not Django, not database or broker clients) and the child module file, plus
  private tmpfs ``/tmp`` and ``/dev/shm``, the inputs (read-only) and a fresh work dir.
* an unprivileged host uid (a fresh one per child when the worker is root), no supplementary
  groups, ``no_new_privs``, ``oom_score_adj`` 1000.
* a cgroup per child (v2, or the v1 ``pids`` and ``memory`` hierarchies): ``pids.max`` and a
  memory limit (``RLIMIT_NPROC`` does not apply to root); killed as a whole at the end.
* rlimits: CPU seconds, file size, open files, core dumps off, address space, processes.
* a size-limited tmpfs work dir in a private mount namespace (a candidate cannot fill the
  host's disk; nothing is left mounted afterwards).
* a wall-clock timeout per phase that kills the whole process group; stdout and stderr are
  drained and capped.

Where bubblewrap or cgroups are unavailable the child still runs with what remains (cleared
environment, fresh work dir, rlimits, new session, and the network/IPC/UTS namespaces the
launcher can still create) and the record says so.

Modules: ``options`` (limits, options, errors), ``host`` (CPUs, interpreter, staging),
``cgroups``, ``bwrap`` (bubblewrap's command line), ``child`` (one child's life), ``pair`` (an
evaluation's timer and export child, started without JAX), ``rundir`` (its run dir, and the
sweep of those killed processes left), ``output`` (its captured output), ``safedir`` (reading
what it wrote), ``probe`` (which mode works here);
``launch.py`` and ``child_main.py`` are standalone scripts started by file path (the launcher,
and the only code that runs inside the sandbox).
"""

from .bwrap import bwrap_info
from .cgroups import cgroup_info
from .child import SandboxedChild
from .options import ChildGone, Limits, PhaseTimeout, SandboxError, SandboxOptions
from .probe import available_protections, best_mode, machine_report
from .safedir import SafeDir

__all__ = [
    "ChildGone",
    "Limits",
    "PhaseTimeout",
    "SafeDir",
    "SandboxError",
    "SandboxOptions",
    "SandboxedChild",
    "available_protections",
    "best_mode",
    "bwrap_info",
    "cgroup_info",
    "machine_report",
]
