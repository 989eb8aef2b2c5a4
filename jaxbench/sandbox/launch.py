"""Trusted launcher: the last step on the trusted side before bubblewrap (or the child).

Started by :mod:`jaxbench.sandbox.child` as ``python -I -S -B launch.py CONFIG_JSON``
in a new session, with the status pipe as an inheritable descriptor. Standard library only
(a standalone script: it imports no sibling module).
In order, as far as this machine allows (each step is reported, never assumed):

1. (root) a private mount namespace: stage bind mounts of paths the sandbox uid cannot reach
   (for example an interpreter under ``/root``) and a size-limited tmpfs for the work dir, so
   a candidate cannot fill the host's disk; both vanish with the namespace.
2. (root) join the per-candidate cgroups (pids.max, memory limit).
3. resource limits: CPU seconds, file size, open files, no core dumps, address space,
   processes.
4. ``oom_score_adj`` 1000: under memory pressure the kernel kills the candidate first.
5. (root) drop to the unprivileged sandbox uid/gid, no supplementary groups.
6. ``PR_SET_NO_NEW_PRIVS``.
7. (without bubblewrap) unshare what is still possible: network, IPC, UTS namespaces.
8. write one ``launcher`` JSON line on fd 3, fork bubblewrap (or the child directly) and stay
   as its child subreaper until every descendant is reaped; exit with the child's status
   (128 + signal for a signalled child).

The launcher's own death signal is SIGTERM, caught: when the trusted parent dies, every
descendant is killed and reaped before the launcher exits. A SIGKILL would leave bubblewrap's
inner process (in its new namespaces, waiting for the outer one to write its uid maps, its own
``--die-with-parent`` not yet armed) to init, blocked for ever.
"""

import ctypes
import json
import os
import resource
import signal
import sys

TYPE_CHECKING = False  # typing is for mypy only: this script does not import it at run time
if TYPE_CHECKING:
    from typing import TypedDict

    class _Report(TypedDict):
        """The ``launcher`` line written on the status pipe."""

        type: str
        steps: dict[str, object]  # each step taken, and what it gave
        errors: list[str]  # each step that failed, and why


CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36

STATUS_FD = 3


def children_of(pid: int) -> list[int]:
    """The children of ``pid``'s main thread (``/proc``'s children list, or a scan of every
    process's parent where the kernel lacks that list)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        pass
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    out.append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    return out


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, parents before their children."""
    out, todo = [], [pid]
    while todo:
        kids = children_of(todo.pop())
        out.extend(kids)
        todo.extend(kids)
    return out


def end_all(signum: int, _frame: object = None) -> None:
    """Kill and reap every descendant, then exit as killed by ``signum``. As a child subreaper
    this process adopts each orphan of the tree it kills, so the loop ends only when none is
    left."""
    me = os.getpid()
    while True:
        for pid in reversed(descendants(me)):  # children last: none forks an orphan past us
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    os._exit(128 + signum)


def main() -> None:
    cfg = json.loads(sys.argv[1])
    report: _Report = {"type": "launcher", "steps": {}, "errors": []}
    steps = report["steps"]
    libc = ctypes.CDLL(None, use_errno=True)

    def fail(what: str) -> None:
        err = ctypes.get_errno()
        report["errors"].append(f"{what}: {os.strerror(err)}")

    # the status pipe becomes fd 3 for the child
    sfd = cfg["status_fd"]
    if sfd != STATUS_FD:
        os.dup2(sfd, STATUS_FD)
        os.close(sfd)

    # 1. private mount namespace, staging and the work tmpfs
    if cfg.get("private_mounts"):
        if libc.unshare(CLONE_NEWNS) != 0:
            fail("unshare(CLONE_NEWNS)")
        elif libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            fail("make / private")
        else:
            steps["private_mount_ns"] = True
            ok = True
            for src, dst in cfg.get("stage", []):
                if libc.mount(src.encode(), dst.encode(), None, MS_BIND | MS_REC, None) != 0:
                    fail(f"stage {src}")
                    ok = False
            steps["staged"] = ok and bool(cfg.get("stage"))
            wt = cfg.get("work_tmpfs")
            if wt:
                opts = f"size={wt['bytes']},mode=0700,uid={wt['uid']},gid={wt['gid']}"
                if libc.mount(b"tmpfs", wt["path"].encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts.encode()) != 0:
                    fail("work tmpfs")
                else:
                    steps["work_tmpfs_bytes"] = wt["bytes"]

    # 2. cgroups
    joined = []
    for procs in cfg.get("cgroup_procs", []):
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
            joined.append(procs)
        except OSError as exc:
            report["errors"].append(f"cgroup {procs}: {exc.strerror}")
    steps["cgroups_joined"] = len(joined)

    # 3. resource limits
    set_limits = []
    for name, value in cfg.get("rlimits", {}).items():
        res = getattr(resource, "RLIMIT_" + name.upper(), None)
        if res is None:
            continue
        try:
            resource.setrlimit(res, (value, value))
            set_limits.append(name)
        except (ValueError, OSError) as exc:
            report["errors"].append(f"rlimit {name}: {exc}")
    steps["rlimits"] = set_limits

    # CPU affinity (the cpu target pins every child to one core: stable timings)
    if cfg.get("cpus"):
        try:
            os.sched_setaffinity(0, cfg["cpus"])
            steps["cpus"] = sorted(os.sched_getaffinity(0))
        except OSError as exc:
            report["errors"].append(f"affinity: {exc.strerror}")

    # 4. the OOM killer's first choice
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
        steps["oom_score_adj"] = 1000
    except OSError:
        pass

    # 5. drop privileges
    uid, gid = cfg.get("uid"), cfg.get("gid")
    if uid is not None and os.geteuid() == 0:
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            steps["uid"] = uid
        except OSError as exc:
            report["errors"].append(f"drop uid: {exc}")
    steps["euid"] = os.geteuid()

    # 6. no new privileges (setuid binaries cannot regain any)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        steps["no_new_privs"] = True
    else:
        fail("no_new_privs")

    # 7. without bubblewrap: the namespaces that can still be had
    if cfg.get("unshare_fallback"):
        flags = CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
        euid, egid = os.geteuid(), os.getegid()
        if euid != 0:
            flags |= CLONE_NEWUSER
        if libc.unshare(flags) == 0:
            if flags & CLONE_NEWUSER:
                libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # reset by the uid change above
                try:  # map our own ids, so files we create keep their owner
                    for path, text in (
                        ("/proc/self/setgroups", "deny"),
                        ("/proc/self/uid_map", f"{euid} {euid} 1"),
                        ("/proc/self/gid_map", f"{egid} {egid} 1"),
                    ):
                        with open(path, "w") as f:
                            f.write(text)
                except OSError as exc:
                    report["errors"].append(f"id maps: {exc.strerror}")
            steps["namespaces"] = ["net", "ipc", "uts"] + (["user"] if flags & CLONE_NEWUSER else [])
        else:
            fail("unshare(net, ipc, uts)")

    # the launcher ends with its parent (set after the uid change, which clears it), taking
    # everything below down first (end_all); bubblewrap has --die-with-parent for the same
    # purpose, armed only after its setup
    parent = cfg.get("parent_pid")
    signal.signal(signal.SIGTERM, end_all)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0:
        steps["pdeathsig"] = True
    if parent and os.getppid() != parent:
        os._exit(1)

    if cfg.get("chdir"):
        try:
            os.chdir(cfg["chdir"])
        except OSError as exc:
            report["errors"].append(f"chdir: {exc.strerror}")

    # 8. stay resident as the reaper of everything below: bubblewrap's outer process may exit
    # before the namespace's init is reaped; as a child subreaper this process adopts and
    # reaps such orphans, so none is left to a host init that may not reap (zombies)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        steps["subreaper"] = True
    os.write(STATUS_FD, (json.dumps(report) + "\n").encode())
    argv = cfg["argv"]
    reaper = os.getpid()
    pid = os.fork()
    if pid == 0:
        libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
        if os.getppid() != reaper:
            # the reaper died before the death signal was armed: nothing would ever stop this
            # child (an orphaned bubblewrap, parent 1, left after a worker was killed at a start)
            os._exit(1)
        try:
            os.execve(argv[0], argv, cfg.get("env", {}))
        except OSError as exc:
            os.write(STATUS_FD, (json.dumps({"type": "launch_failed", "error": str(exc)}) + "\n").encode())
        os._exit(127)
    # the reaper keeps no pipe of the child open
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2, STATUS_FD):
        os.dup2(devnull, fd)
    os.close(devnull)
    code = 0
    while True:
        try:
            wpid, status = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if wpid == pid:
            if os.WIFSIGNALED(status):
                code = 128 + os.WTERMSIG(status)
            else:
                code = os.WEXITSTATUS(status)
    os._exit(code)


if __name__ == "__main__":
    main()
