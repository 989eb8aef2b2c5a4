"""One sandboxed child's life (trusted side): spawning it through the launcher (and bubblewrap
where the mode has it), its status channel, pinning it to its CPUs, reading its output, and
killing and cleaning up everything it started."""

from __future__ import annotations

import atexit
import json
import os
import secrets
import select
import signal
import subprocess
import sys
import time
import weakref
from typing import IO, TYPE_CHECKING, Any, Self, cast

from ..hardware import export_platform
from . import cores, device, host, proc_stat, rundir
from .bwrap import BwrapInfo, bwrap_argv, bwrap_info, device_nodes, site_entries
from .cgroups import Cgroup, cgroup_info
from .launch import descendants
from .options import ChildGone, PhaseTimeout, SandboxError, SandboxOptions
from .output import Drain
from .safedir import SafeDir

if TYPE_CHECKING:
    from ..hardware import Target

HERE = os.path.dirname(os.path.abspath(__file__))
CHILD_FILE = os.path.join(HERE, "child_main.py")
LAUNCH_FILE = os.path.join(HERE, "launch.py")

SANDBOX_UID_BASE = 1_509_949_440  # fresh host uid per child: BASE + random 20 bits
# environment passed to accelerator children (hardware configuration, never credentials)
ACCEL_ENV_PREFIXES = (
    "TPU_",
    "LIBTPU_",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
)
ACCEL_ENV_DENY = ("TOKEN", "SECRET", "KEY", "PASSWORD", "CREDENTIAL")

# one JSON object of the status channel (a command sent, a reply received): data, read by key
Message = dict[str, Any]


_LIVE: weakref.WeakSet[SandboxedChild] = weakref.WeakSet()


@atexit.register
def _close_live_children() -> None:
    """At interpreter exit no child, run dir or cgroup is left behind."""
    for child in list(_LIVE):
        try:
            child.close()
        except Exception:  # noqa: BLE001
            pass


class SandboxedChild:
    """One child process for one candidate. ``start()`` spawns it and returns after the
    launcher's report; ``hello()`` waits until JAX is imported (before any candidate code)."""

    # the hardware target the child runs on: set by the harness after hello (harness.run)
    target: Target

    def __init__(self, options: SandboxOptions | None = None):
        self.opt = options or SandboxOptions()
        if self.opt.role not in ("timer", "export"):
            raise ValueError(f"unknown child role {self.opt.role!r}")
        if self.opt.role == "export" and self.opt.platform != "cpu":
            raise ValueError("an export child has no device: its platform is cpu")
        self.run_dir = rundir.make(self.opt.base_dir)
        self.in_dir = os.path.join(self.run_dir, "in")
        self.host_work = os.path.join(self.run_dir, "work")
        try:
            os.mkdir(self.in_dir, 0o755)
            os.mkdir(os.path.join(self.in_dir, "sets"), 0o755)
            os.mkdir(self.host_work, 0o700)
        except BaseException:
            rundir.remove(self.run_dir)
            raise
        self.proc: subprocess.Popen[bytes] | None = None
        self.cgroup: Cgroup | None = None
        self.protections: dict[str, Any] = {}
        self.launcher: Message = {}
        self.hello_info: Message | None = None
        self._buf = b""
        self._status_r: int | None = None
        self._streams: dict[str, Drain] = {}
        self._work_via_proc = False
        self.started_at: float | None = None
        self.closed = False
        self._left_pids: list[int] = []
        # exclusive devices (TPU, GPU; cpu when simulated): the child opens its device only on
        # open_device(), under the device lock held here until the child is dead
        self.exclusive = device.exclusive(self.opt.platform) and not self.opt.probe and self.opt.role == "timer"
        self.device_lock: device.DeviceLock | None = None
        self._device_nodes: list[str] | None = None
        # cores an "auto" pin keeps off where another is free: an export child's own timer's,
        # so that the timer compiles its baseline beside the export, not after it (pair.py)
        self.avoid_cores: list[int] = []
        _LIVE.add(self)  # complete now: close() at exit can clean it up

    # -- spawning
    def start(self, timeout: float = 30.0) -> Self:
        """Spawn the child; a child that fails to start is closed (its run dir, cgroup and
        processes gone) before the error is raised."""
        try:
            return self._start(timeout)
        except BaseException:
            self.close()
            raise

    def _start(self, timeout: float) -> Self:
        from .probe import best_mode  # deferred: probe.py starts children of this class to find the mode

        mode = self.opt.mode or best_mode(self.opt.platform)
        lim = self.opt.limits
        is_root = os.geteuid() == 0
        uid = gid = None
        if is_root and mode in ("bwrap-unprivileged", "none-unprivileged"):
            uid = gid = SANDBOX_UID_BASE + secrets.randbelow(1 << 20)
        src_for = host.Stager(self.run_dir, uid)

        sites = host.site_dirs(site_entries)
        prefix = host.python_prefix()
        pybin = host.python_binary()
        env = {
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            # JAX's name of the platform: a GPU is "cuda" ("gpu" would also try ROCm)
            "JAX_PLATFORMS": export_platform(self.opt.platform),
            "TF_CPP_MIN_LOG_LEVEL": "2",
            "PYTHONDONTWRITEBYTECODE": "1",
            "JAX_ENABLE_COMPILATION_CACHE": "false",
        }
        if self.opt.platform != "cpu":
            for k, v in os.environ.items():
                if k.startswith(ACCEL_ENV_PREFIXES) and not any(w in k for w in ACCEL_ENV_DENY):
                    env[k] = v
        if self.opt.platform == "gpu":
            # the GPU client would otherwise take most of the device's memory at start
            env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
            # CUDA's indices in PCI order, as nvidia-smi numbers GPUs and as the sandbox maps
            # CUDA_VISIBLE_DEVICES to device nodes (bwrap.nvidia_device_nodes)
            env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        fake_dir = device.sim_dir(self.opt.platform) if self.exclusive and self.opt.platform == "cpu" else None

        if uid is not None:
            assert gid is not None  # set together with uid
            os.chown(self.host_work, uid, gid)
        # the accelerator's device nodes the sandbox binds (without bubblewrap: the host's /dev)
        self._device_nodes = device_nodes(self.opt.platform) if mode.startswith("bwrap") else None
        if mode.startswith("bwrap"):
            argv = bwrap_argv(
                env,
                src_for,
                prefix=prefix,
                site=sites,
                pybin=pybin,
                child_file=CHILD_FILE,
                in_dir=self.in_dir,
                work_dir=self.host_work,
                tmp_bytes=lim.tmp_bytes,
                platform=self.opt.platform,
                fake_device=src_for(fake_dir) if fake_dir else None,
                nodes=self._device_nodes,
            )
            if fake_dir:
                argv += ["--fake-device", device.SIM_MOUNT]
            run_env = {"PATH": "/usr/bin:/bin"}
            chdir = "/"
        else:
            if uid is not None and not host.reachable_by_others(prefix):
                # the interpreter lives where the sandbox uid cannot go: run it from a staged
                # bind mount (private mount namespace), its shared library with it
                staged = src_for(prefix)
                pybin = os.path.join(staged, os.path.relpath(pybin, prefix))
                env["LD_LIBRARY_PATH"] = os.path.join(staged, "lib")
            child_file = src_for(CHILD_FILE)
            argv = [
                pybin,
                "-I",
                "-S",
                "-B",
                child_file,
                "--in",
                self.in_dir,
                "--work",
                self.host_work,
                *(a for d in sites for a in ("--site", src_for(d))),
            ]
            if fake_dir:
                argv += ["--fake-device", src_for(fake_dir)]
            run_env = env
            chdir = self.host_work
        if self.opt.probe:
            argv.append("--probe")
        elif self.exclusive:
            argv.append("--lazy-device")
        if not self.opt.probe:
            argv += ["--role", self.opt.role]

        # rlimits
        rl = {"cpu": lim.cpu_seconds, "fsize": lim.file_bytes, "nofile": lim.open_files, "core": 0}
        if uid is not None or not is_root:
            rl["nproc"] = lim.nproc
        cg_info = cgroup_info() if is_root else None
        as_limit = lim.address_space_bytes
        if as_limit is None and self.opt.platform == "cpu":
            as_limit = (lim.memory_bytes + (16 << 30)) if cg_info else max(2 * lim.memory_bytes, 8 << 30)
        if as_limit:
            rl["as"] = as_limit
        # cgroup
        if cg_info:
            try:
                self.cgroup = Cgroup(cg_info, f"c-{secrets.token_hex(6)}", lim.memory_bytes, lim.pids)
            except OSError:
                self.cgroup = None
        private_mounts = is_root
        work_tmpfs = None
        if is_root and uid is not None:
            work_tmpfs = {"path": self.host_work, "bytes": lim.work_bytes, "uid": uid, "gid": gid}
        r, w = os.pipe()
        self._cpus = lim.cpus if lim.cpus is not None else host.default_cpus(self.opt.platform)
        cfg = {
            "status_fd": w,
            "argv": argv,
            "env": run_env,
            "rlimits": rl,
            "cgroup_procs": self.cgroup.procs_files if self.cgroup else [],
            "uid": uid,
            "gid": gid,
            "private_mounts": private_mounts,
            "stage": src_for.pairs,
            "work_tmpfs": work_tmpfs,
            "unshare_fallback": not mode.startswith("bwrap"),
            "chdir": chdir,
            "parent_pid": os.getpid(),
        }
        launch_argv = [sys.executable, "-I", "-S", "-B", LAUNCH_FILE, json.dumps(cfg)]
        self.started_at = time.monotonic()
        self._stat0 = host.cpu_times()
        try:
            self.proc = subprocess.Popen(
                launch_argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(w,),
                start_new_session=True,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                cwd="/",
            )
        finally:
            os.close(w)
        self._status_r = r
        for name, stream in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr)):
            self._streams[name] = Drain(cast("IO[bytes]", stream), lim.output_cap)  # both PIPE: never None
        try:
            self.launcher = self.recv(timeout)
        except (PhaseTimeout, ChildGone) as exc:
            err = self.stderr_tail()
            self.close()
            raise SandboxError(f"launcher did not report ({type(exc).__name__}): {err[-2000:]}") from exc
        if self.launcher.get("type") != "launcher":
            self.close()
            raise SandboxError(f"unexpected launcher reply {self.launcher!r}")
        steps = self.launcher.get("steps", {})
        self._work_via_proc = "work_tmpfs_bytes" in steps
        self.protections = self._protections(mode, steps, uid, rl)
        return self

    def _protections(self, mode: str, steps: dict[str, Any], uid: int | None, rl: dict[str, int]) -> dict[str, Any]:
        bw = mode.startswith("bwrap")
        info = bwrap_info() if bw else None
        ns = (
            ["user", "pid", "net", "ipc", "uts", "cgroup", "mount"]
            if bw
            else list(steps.get("namespaces", [])) + (["mount"] if steps.get("private_mount_ns") else [])
        )
        return {
            "sandbox": "bubblewrap" if bw else "none",
            "bubblewrap_version": info["version"] if info else None,
            "namespaces": ns,
            # info is never None with bw: a bwrap mode is chosen or forced only where bwrap exists
            "disable_userns": bool(bw and "--disable-userns" in cast("BwrapInfo", info)["flags"]),
            "die_with_parent": bw,
            "new_session": True,
            "cap_drop_all": bw,
            "minimal_filesystem": bw,
            "clearenv": True,
            "private_tmp": bw,
            "unprivileged_uid": steps.get("euid", 0) != 0,
            "host_uid": steps.get("euid"),
            "no_new_privs": bool(steps.get("no_new_privs")),
            "cgroup": self.cgroup.version if self.cgroup else None,
            "cgroup_pids_max": bool(self.cgroup and self.cgroup.active["pids"] and steps.get("cgroups_joined")),
            "cgroup_memory_max": bool(self.cgroup and self.cgroup.active["memory"] and steps.get("cgroups_joined")),
            "rlimits": sorted(steps.get("rlimits", [])),
            "work_dir_quota": bool(steps.get("work_tmpfs_bytes")),
            "cpu_affinity": None,  # set by hello(): the CPUs the child is confined to
            "cpu_pinning": None,  # "cpuset" (cannot be undone) or "affinity"
            "oom_score_adj": steps.get("oom_score_adj"),
            "phase_timeouts": True,
            "process_group_kill": True,
            # one device-holding process per device: the lock this child's device is opened under
            "device_lock": device.lock_path(self.opt.platform) if self.exclusive else None,
            "simulated_device": bool(self.exclusive and self.opt.platform == "cpu"),
            "gpu_preallocate": False if self.opt.platform == "gpu" else None,
            # the device nodes bound into the sandbox (None: no bubblewrap, the host's /dev)
            "device_nodes": self._device_nodes,
            "launcher_errors": self.launcher.get("errors", []),
        }

    # -- the status channel
    def send(self, obj: Message) -> None:
        data = (json.dumps(obj) + "\n").encode()
        assert self.proc is not None and self.proc.stdin is not None  # set by start() (stdin=PIPE)
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise ChildGone("stdin closed") from None

    def recv(self, timeout: float, max_line: int = 8 << 20) -> Message:
        end = time.monotonic() + timeout
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line, self._buf = self._buf[:nl], self._buf[nl + 1 :]
                try:
                    obj = json.loads(line)
                except ValueError:
                    return {"type": "garbage", "text": line[:200].decode("utf-8", "replace")}
                return obj if isinstance(obj, dict) else {"type": "garbage", "text": str(obj)[:200]}
            if len(self._buf) > max_line:
                return {"type": "garbage", "text": "status line over the cap"}
            left = end - time.monotonic()
            if left <= 0:
                raise PhaseTimeout()
            assert self._status_r is not None  # set by start()
            ready, _, _ = select.select([self._status_r], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(self._status_r, 1 << 16)
                if not chunk:
                    raise ChildGone("status channel closed")
                self._buf += chunk

    def hello(self, timeout: float) -> Message:
        msg = self.recv(timeout)
        if msg.get("type") == "launch_failed":
            raise SandboxError(f"exec failed: {msg.get('error')}")
        if msg.get("type") != "hello":
            raise SandboxError(f"child did not say hello: {msg!r}")
        self.hello_info = msg
        if not msg.get("lazy_device"):
            self._pin()
        return msg

    def open_device(self, timeout: float) -> dict[str, Any]:
        """Have the child open its device: on an exclusive device, first wait for the device's
        lock (held until this child is dead, see close()), then ask the child, which is still
        free of candidate code. Returns the seconds waited for the lock and those the child
        took to open the device; the device's description joins ``hello_info``."""
        assert self.hello_info is not None  # after hello()
        if not self.hello_info.get("lazy_device"):
            return {"wait_s": 0.0, "open_s": self.hello_info.get("device_open_s")}
        if self.device_lock is None:
            lock = device.DeviceLock(self.opt.platform)
            wait_s = lock.acquire()
            self.device_lock = lock
        else:
            wait_s = 0.0
        self.send({"cmd": "open"})
        reply = self.recv(timeout)
        if reply.get("type") != "device":
            raise SandboxError(
                f"the child could not open the device {self.device_lock.name}: {reply.get('message', reply)}"
            )
        self.hello_info.update({k: reply.get(k) for k in ("platform", "device_kind", "n_devices")})
        self.hello_info.update(lazy_device=False, device_open_s=reply.get("open_s"))
        self._pin()  # now that the backend sized its thread pool
        return {"wait_s": wait_s, "open_s": reply.get("open_s")}

    def _pin(self) -> None:
        """Confine the child to its CPUs now that JAX is initialised (XLA sized its thread
        pool for the whole machine: a one-thread pool can deadlock TPU interpret mode's
        callbacks) and before any candidate code exists in it."""
        cpus = getattr(self, "_cpus", None)
        if not cpus or self.proc is None:
            return
        if cpus == ["auto"]:
            # the least busy of the cores outside timing phases (cores.py: a dedicated timing
            # core is entered only for a timing phase, under its lock)
            allowed = cores.work_cores()
            allowed = [c for c in allowed if c not in self.avoid_cores] or allowed
            core = host.least_busy_core(getattr(self, "_stat0", {}), host.cpu_times(), allowed)
            if core is None:
                return
            cpus = [core]
        self.confine(cpus)

    def confine(self, cpus: list[int]) -> bool:
        """Move every process and thread of the child onto ``cpus`` (its cpuset where it has
        one, which its code cannot widen; else each thread's affinity). The trusted side calls
        it at start and to move a timer onto its timing core and back (cores.py)."""
        if self.proc is None:
            return False
        pids = [self.proc.pid] + descendants(self.proc.pid)
        if self.cgroup and self.cgroup.restrict_cpus(cpus, pids):
            self.protections["cpu_pinning"] = "cpuset"
        else:
            ok = all([cores.set_affinity(pid, cpus) for pid in pids])
            self.protections["cpu_pinning"] = "affinity" if ok else None
        if self.protections["cpu_pinning"]:
            self.protections["cpu_affinity"] = list(cpus)
            return True
        return False

    # -- the child's files
    @property
    def work(self) -> SafeDir:
        if self._work_via_proc and self.proc is not None:
            return SafeDir(f"/proc/{self.proc.pid}/root{self.host_work}")
        return SafeDir(self.host_work)

    def stdout_tail(self) -> str:
        return self._streams["stdout"].text() if "stdout" in self._streams else ""

    def stderr_tail(self) -> str:
        return self._streams["stderr"].text() if "stderr" in self._streams else ""

    def output_info(self) -> dict[str, dict[str, int | bool]]:
        return {k: {"bytes": d.total, "truncated": d.total > d.cap} for k, d in self._streams.items()}

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def dead(self) -> bool:
        """Closed, and every process of it gone: the launcher reaped and its cgroup empty when
        it was removed (the baseline guard and the timer start only after this)."""
        return self.closed and (self.proc is None or self.proc.poll() is not None) and not self._left_pids

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system, every thread) the child's processes have used so far, read
        from ``/proc`` for each process of its cgroup; None without a cgroup (no way to find
        every process of it). What a compile limit counts: unlike wall time, the machine's load
        barely moves it."""
        if self.cgroup is None:
            return None
        pids = self.cgroup.pids()
        if not pids:
            return None
        # a process gone since the list was read counts nothing
        return sum(proc_stat.cpu_seconds(pid) or 0.0 for pid in pids)

    def at_memory_limit(self) -> bool:
        """The child's cgroup ran into its memory limit and still holds most of it."""
        return bool(self.cgroup and self.cgroup.at_memory_limit())

    def wait_exit(self, timeout: float = 5.0) -> tuple[int, str | None, bool]:
        """(returncode, signal name or None, oom_killed) after the child ended."""
        assert self.proc is not None  # set by start()
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.wait(timeout=5)
        sig = None
        if rc < 0:
            sig = signal.Signals(-rc).name
        elif rc > 128 and rc - 128 < 65:  # bubblewrap reports a signalled child as 128+N
            try:
                sig = signal.Signals(rc - 128).name
            except ValueError:
                sig = None
        oom = bool(self.cgroup and self.cgroup.oom_killed())
        return rc, sig, oom

    def dump_stacks(self, wait_s: float = 0.5) -> str:
        """Ask the child's Python processes for their stacks (faulthandler on SIGUSR1, to
        stderr) before a timeout kill; returns the dump from the captured stderr."""
        if self.proc is None or self.proc.poll() is not None:
            return ""
        before = self._streams["stderr"].total
        for pid in descendants(self.proc.pid):
            try:
                exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                continue
            if exe.startswith("python"):
                try:
                    os.kill(pid, signal.SIGUSR1)
                except OSError:
                    pass
        end = time.monotonic() + wait_s
        while time.monotonic() < end and self._streams["stderr"].total == before:
            time.sleep(0.02)
        time.sleep(0.05)
        text = self.stderr_tail()
        i = text.rfind("Thread 0x")
        j = text.find("Current thread 0x")
        k = min([x for x in (i, j) if x >= 0], default=-1)
        return text[k:] if k >= 0 else ""

    def kill(self) -> None:
        """Kill everything the child started. The launcher stays resident as a subreaper, so
        the sandbox's processes are killed first (SIGKILL to the PID namespace's init takes the
        whole namespace down) and the launcher reaps them and exits; then the process group
        and whatever the cgroup still holds. No orphan or zombie is left."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            for pid in reversed(descendants(proc.pid)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            if self.cgroup:
                for pid in self.cgroup.pids():
                    if pid != proc.pid:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except OSError:
                            pass
            # the launcher exits once it has reaped every descendant; tearing down hundreds of
            # processes (a fork bomb) takes seconds, so it gets time before it is killed itself
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
        if self.cgroup:
            self.cgroup.kill_all()
        if proc is not None:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.proc is not None and self.proc.poll() is None:
                try:
                    self.send({"cmd": "exit"})
                    self.proc.wait(timeout=2)
                except (ChildGone, subprocess.TimeoutExpired):
                    pass
            self.kill()
            for d in self._streams.values():
                d.join(2.0)
            if self.proc is not None:
                # all three are pipes (start(): stdin, stdout and stderr PIPE), never None
                pipes = cast("tuple[IO[bytes], ...]", (self.proc.stdin, self.proc.stdout, self.proc.stderr))
                for s in pipes:
                    try:
                        s.close()
                    except OSError:
                        pass
        finally:
            if self._status_r is not None:
                try:
                    os.close(self._status_r)
                except OSError:
                    pass
                self._status_r = None
            if self.cgroup:
                self._left_pids = [p for p in self.cgroup.pids() if p != os.getpid()]
                self.cgroup.remove()
            rundir.remove(self.run_dir)
            if self.device_lock is not None:
                # only now: every process of the sandbox has been killed and reaped above
                self.device_lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
