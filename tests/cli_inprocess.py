"""Run the ``mwperf`` command line inside the test process, as the tests see a child
``python -m mwperf.cli`` (conftest.run_mwperf): same argv, environment, exit code, and stdout and
stderr captured at the file-descriptor level, so what the CLI's own children (agents, daemons)
print lands in the result as it does with ``capture_output``. A child Python costs ~0.6 s of CPU
(importing duckdb, click and mwperf) per call; here that is paid once per pytest worker. Every
call runs here, the real agent's runs too, unless the test asks for a child
(conftest.run_mwperf's ``process=True``), $MWPERF_TEST_INPROCESS is 0, or the call comes from
a thread other than the main one.

What a fresh process would not have, and is therefore reset around each call:

- ``os.environ`` is replaced by ``env`` for the call and restored after, key for key (removed
  keys included); ``tempfile.tempdir`` is reset so that $TMPDIR is read again, ``sys.argv`` is
  ``[.../mwperf/cli.py, *args]``, the working directory is ``cwd`` when given;
- every ``functools.cache``/``lru_cache`` of the loaded ``mwperf.*`` modules is cleared before
  and after the call (mwperf.agent caches an agent's ``transports --json`` per path, and the fake
  agent's answer depends on FAKE_AGENT_TRANSPORTS), but the KEPT ones: what they hold comes
  from the package's own files alone or is empty between calls (the result schema's
  validators, ~30 ms to make each; the in-memory DuckDB catalogues are attached to);
- the module-level state mwperf keeps per process (MODULE_STATE: the bridge builds that failed,
  the replay trace folder, the pooled ssh connections) is set aside for the call and put back
  after, so neither the call nor the test see the other's;
- what the call registers with ``atexit`` (mwperf.* callers only: parquet.py's DuckDB spill
  folder, scenario/check.py's replay traces) runs when the call ends, as at a process's exit,
  instead of at the end of the test session; remote/hosts.py's ``close_all`` (registered at
  import) runs then too;
- the SIGINT, SIGTERM, SIGALRM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGCHLD handlers are saved
  and restored (cli.main installs its SIGTERM handler; SIGINT is Python's default, a
  KeyboardInterrupt, during the call, as in a fresh interpreter), and so is the real-time
  interval timer (scenario/deadline.py's SIGALRM);
- the fake agent's catalogue answers (``payloads``, ``transports``, ``options`` with --json,
  ``--version``) are asked of it once per test process and $FAKE_AGENT_TRANSPORTS, then given
  to mwperf.agent's queries from memory: they depend on nothing else (fakes/fake_agent.py), and
  each asked anew was a Python start (~0.1 s of CPU; some 150 per unit tier, every call's cache
  being cleared);
- warnings print on stderr with Python's default filters (not into pytest's warning capture);
- stdin is empty (fd 0 on /dev/null, sys.stdin reading it), as pytest's fd capture gives a child;
- at the end, as at an interpreter's exit: non-daemon threads the call started are waited for
  (idle thread-pool workers aside: mwperf.parts.restart keeps one for the process), the atexit
  callbacks run, stdout and stderr are flushed; then children the call started and left running
  are killed with SIGKILL and reaped: every child mwperf starts has PR_SET_PDEATHSIG=SIGKILL
  (procs._die_with_parent), which the kernel would deliver when mwperf exits (not to one that
  changed its user ID, e.g. mosquitto started as root: the kernel cleared its PDEATHSIG).

The exit code is what the process's would be: ``sys.exit(n)`` gives ``n & 0xFF``, ``None`` 0,
any other value 1 with the value on stderr; an uncaught KeyboardInterrupt gives -SIGINT (Python
kills itself with SIGINT) and another uncaught exception 1, each with its traceback on stderr.

The timeout: when the call overruns it, a watchdog thread sends the main thread SIGTERM (mwperf's
handler stops the run, its agents and daemons, as a SIGTERM of the process would), again every
second while the call goes on; when the call has returned, subprocess.TimeoutExpired is raised
as subprocess.run raises it. It is not enforced while the CLI ignores SIGTERM (it does so only
briefly, while stopping its children) nor when the main thread is stuck in C code that never
returns to Python; the subprocess path SIGKILLs instead.

Not reproduced: Python's startup (``-m`` puts the module under ``__main__``; nothing in mwperf
tells; a run starts ~0.7 s sooner), a library's logging records (pytest's handlers get them, not
stderr), PYTHONWARNINGS in ``env``, and file descriptors or daemon threads the call leaks (a
process exit would close and end them). Monkeypatches of mwperf the test made are seen by the
call: such a test asks for a process (run_mwperf(..., process=True)). Direct children remain
where a call runs beside the test's own threads (tests/test_probe_zenoh_e2e.py's publishers),
in tests/ros2peers/peers.py (the benchmarks use it too), and, without a known reason, in
tests/test_probe_ros2_rclpy_e2e.py: in process, its [lo] probe counted no message when it ran
beside other tests (2 batches of 2; the module alone in one process, [default] then [lo],
passed).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import io
import locale
import os
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

FAKE_AGENT = Path(__file__).resolve().parent / "fakes" / "fake_agent.py"

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM, signal.SIGHUP, signal.SIGQUIT,
           signal.SIGUSR1, signal.SIGUSR2, signal.SIGCHLD)
"""the handlers saved before a call and restored after it"""

MODULE_STATE = {
    "mwperf.bridges.build": ("_failed",),  # bridge builds that failed in this process
    "mwperf.scenario.check": ("_TRACES",),  # the replay trace folder (rmtree at exit)
    "mwperf.remote.hosts": ("_POOL",),  # pooled ssh connections (close_all at exit)
}
"""module -> its module-level containers that hold per-process state (found by grepping
python/mwperf for module-level dicts, lists and sets that functions fill, and ``global``):
emptied for the call, their contents put back after it"""

FAKE_QUERIES = ("payloads", "transports", "options", "--version")
"""the fake agent's answers that depend on nothing but $FAKE_AGENT_TRANSPORTS"""
_fake_answers: dict[tuple[str, ...], str] = {}
"""(FAKE_AGENT_TRANSPORTS, *query) -> what the fake agent printed"""

AT_EXIT = {"mwperf.remote.hosts": "close_all"}
"""module -> the function it registers with atexit at import: run at the end of every call"""

GRACE_S = 1.0
"""how often the watchdog repeats its SIGTERM once the timeout has passed"""


def uses_fake_agent(env: Mapping[str, str] | None) -> bool:
    """True when ``env`` (None: this process's) selects the fake agent (tests/fakes)."""
    agent = (os.environ if env is None else env).get("MWPERF_AGENT")
    if not agent:
        return False
    try:
        return Path(agent).resolve() == FAKE_AGENT
    except OSError:
        return False


SWITCH = "MWPERF_TEST_INPROCESS"
"""set to 0 in the test run's environment: every call gets a child process (to compare)"""


def can_run_inprocess() -> bool:
    """The call may run in this process: from the main thread (signals), and not switched off
    ($MWPERF_TEST_INPROCESS=0)."""
    return os.environ.get(SWITCH) != "0" and threading.current_thread() is threading.main_thread()


def run_inprocess(args: Sequence[str], env: Mapping[str, str] | None = None,
                  timeout: float | None = None, cwd: str | os.PathLike[str] | None = None
                  ) -> subprocess.CompletedProcess[str]:
    """``mwperf *args`` in this process, as ``subprocess.run([sys.executable, "-m",
    "mwperf.cli", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)``
    would run it (module docstring). Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_inprocess: only from the main thread (signal handlers)")
    import mwperf.cli

    argv = [str(a) for a in args]
    command = [sys.executable, "-m", "mwperf.cli", *argv]
    finished = threading.Event()
    timed_out = threading.Event()
    with contextlib.ExitStack() as stack:
        stack.enter_context(_process_state(env, cwd, mwperf.cli.__file__, argv))
        captured = stack.enter_context(_captured_fds())
        stack.enter_context(_fresh_warnings())
        stack.enter_context(fake_agent_answers())
        watchdog = _start_watchdog(timeout, finished, timed_out)
        try:
            code = _exit_code(mwperf.cli.main, argv)
        except BaseException:  # the watchdog's SIGTERM met the exit steps: as a SIGKILL would
            if not timed_out.is_set():
                raise
            code = -signal.SIGKILL
        finally:
            finished.set()
            if watchdog is not None:
                watchdog.join()
    stdout, stderr = captured["stdout"], captured["stderr"]
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(command, timeout or 0.0, output=stdout, stderr=stderr)
    # a command ends every use of a catalogue (store/attached.py): none stays locked after it
    from mwperf.store.attached import attached
    assert not attached(), (command, attached(), stderr)
    return subprocess.CompletedProcess(command, code, stdout, stderr)


def _exit_code(main: Callable[[list[str]], object], argv: list[str]) -> int:
    """Run ``main(argv)`` then what an interpreter does at exit; the process's exit status."""
    threads = set(threading.enumerate())
    exits: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
    with _recording_atexit(exits):
        code = _call(main, argv)
        _join_new_threads(threads)
    for func, args, kwargs in reversed(exits):
        try:
            func(*args, **kwargs)
        except Exception:  # as Python reports a failing atexit callback
            print(f"Exception ignored in atexit callback: {func!r}", file=sys.stderr)
            traceback.print_exc()
    for name, function in AT_EXIT.items():
        module = sys.modules.get(name)
        if module is not None:
            getattr(module, function)()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # Python's status when flushing stdout at exit fails
    return code


def _call(main: Callable[[list[str]], object], argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exc:
        return _status(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives a process."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


@contextlib.contextmanager
def _recording_atexit(exits: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]
                      ) -> Iterator[None]:
    """atexit.register/unregister called from mwperf.* go to ``exits`` instead (others pass)."""
    register, unregister = atexit.register, atexit.unregister

    def from_mwperf() -> bool:
        caller = sys._getframe(2).f_globals.get("__name__", "")
        return caller == "mwperf" or caller.startswith("mwperf.")

    def recording_register(func: Callable[..., Any], *args: Any, **kwargs: Any
                           ) -> Callable[..., Any]:
        if not from_mwperf():
            return register(func, *args, **kwargs)
        exits.append((func, args, kwargs))
        return func

    def recording_unregister(func: Callable[..., Any]) -> None:
        if not from_mwperf():
            unregister(func)
            return
        exits[:] = [entry for entry in exits if entry[0] != func]

    atexit.register, atexit.unregister = recording_register, recording_unregister  # type: ignore[assignment]
    try:
        yield
    finally:
        atexit.register, atexit.unregister = register, unregister  # type: ignore[assignment]


def _join_new_threads(before: set[threading.Thread]) -> None:
    """Wait, as an exiting interpreter does, for the non-daemon threads started since
    ``before`` (a thread pool's idle workers aside: the pool lives as long as the process)."""
    for thread in threading.enumerate():
        if thread in before or thread.daemon or not thread.is_alive():
            continue
        target = getattr(thread, "_target", None)
        if getattr(target, "__module__", "") == "concurrent.futures.thread":
            continue
        thread.join()


@contextlib.contextmanager
def _process_state(env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None,
                   script: str, argv: list[str]) -> Iterator[None]:
    """Environment, argv, cwd, tempdir, signals, timers, caches, module state and children,
    as a fresh process has them; everything put back afterwards."""
    environ = dict(os.environ)
    saved_argv, saved_tempdir, saved_cwd = sys.argv, tempfile.tempdir, os.getcwd()
    handlers = {sig: signal.getsignal(sig) for sig in SIGNALS}
    timer = signal.getitimer(signal.ITIMER_REAL)
    children = set(_children())
    state = _set_aside_module_state()
    _clear_caches()
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        sys.argv = [script, *argv]
        tempfile.tempdir = None
        if cwd is not None:
            os.chdir(cwd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, *timer)
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
        _reap_new_children(children)
        _clear_caches()
        _put_back_module_state(state)
        os.chdir(saved_cwd)
        sys.argv, tempfile.tempdir = saved_argv, saved_tempdir
        if dict(os.environ) != environ:
            os.environ.clear()
            os.environ.update(environ)


@contextlib.contextmanager
def fake_agent_answers() -> Iterator[None]:
    """mwperf.agent's queries of the fake agent's catalogues answered from ``_fake_answers``
    (asked of the fake agent the first time); any other query runs as it would. Each call does
    this; conftest's fake_env too, for the test's own calls of mwperf."""
    import mwperf.agent

    asked = mwperf.agent._query  # functools.cache'd (or this wrapper, nested)
    uncached = getattr(asked, "__wrapped__", asked)

    def query(path: Path, *args: str) -> str:
        if not (args and args[0] in FAKE_QUERIES and uses_fake_agent({"MWPERF_AGENT": str(path)})):
            return asked(path, *args)
        key = (os.environ.get("FAKE_AGENT_TRANSPORTS", ""), *args)
        if key not in _fake_answers:  # asked of the fake agent itself, never of a cache
            _fake_answers[key] = uncached(path, *args)
        return _fake_answers[key]

    query.__wrapped__ = uncached  # type: ignore[attr-defined]
    query.cache_clear = asked.cache_clear  # type: ignore[attr-defined]  (_clear_caches)
    query.answers_the_fake_agent = True  # type: ignore[attr-defined]
    mwperf.agent._query = query  # type: ignore[assignment]
    try:
        yield
    finally:
        mwperf.agent._query = asked


def _mwperf_modules() -> list[types.ModuleType]:
    return [module for name, module in list(sys.modules.items())
            if (name == "mwperf" or name.startswith("mwperf.")) and module is not None]


def _clear_caches() -> None:
    """Clear every functools cache of the loaded mwperf modules (module level, and one class
    level deep). Where the caches live is found once per set of loaded modules (a walk of every
    module's members cost ~15 ms a run); what lives there now is cleared (a test may have
    replaced it, as fake_agent_answers replaces mwperf.agent._query)."""
    modules = _mwperf_modules()
    key = frozenset(module.__name__ for module in modules)
    if key not in _CACHE_PLACES:
        _CACHE_PLACES.clear()
        _CACHE_PLACES[key] = _cache_places(modules)
    for owner, name in _CACHE_PLACES[key]:
        value = vars(owner).get(name)
        _clear_cache(getattr(value, "__func__", value))


_CACHE_PLACES: dict[frozenset[str], list[tuple[Any, str]]] = {}
"""(module or class, attribute name) of every cache, per set of loaded mwperf modules"""


def _cache_places(modules: list[types.ModuleType]) -> list[tuple[Any, str]]:
    places = []
    for module in modules:
        for name, value in list(vars(module).items()):
            if _is_cache(value):
                places.append((module, name))
            if isinstance(value, type) and value.__module__ == module.__name__:
                places += [(value, member) for member, found in list(vars(value).items())
                           if _is_cache(getattr(found, "__func__", found))]
    return places


KEPT = frozenset({"mwperf.schema._fast", "mwperf.schema._validator", "mwperf.schema._schema",
                  "mwperf.store.attached._instance"})
"""caches kept across calls, each the same as a fresh process would make: the schema's
validators (made from the package's own files, which no test changes) and the in-memory DuckDB
that catalogues are attached to (~30 ms to start; nothing of its own, and nothing stays attached
after a call: checked after every call below)"""


def _is_cache(value: object) -> bool:
    if f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}" in KEPT:
        return False
    return (isinstance(value, functools._lru_cache_wrapper)
            or bool(getattr(value, "answers_the_fake_agent", False)))


def _clear_cache(value: object) -> None:
    if isinstance(value, functools._lru_cache_wrapper):
        value.cache_clear()
    elif getattr(value, "answers_the_fake_agent", False):  # fake_agent_answers' wrapper
        value.cache_clear()  # type: ignore[attr-defined]  (of the cache it wraps)


def _set_aside_module_state() -> dict[tuple[str, str], Any]:
    saved = {}
    for name, attributes in MODULE_STATE.items():
        module = sys.modules.get(name)
        for attribute in attributes if module is not None else ():
            container = getattr(module, attribute)
            saved[name, attribute] = container.copy()
            container.clear()
    return saved


def _put_back_module_state(saved: dict[tuple[str, str], Any]) -> None:
    """Empty the call's containers (its own, of modules first imported by the call, too) and
    put back what the test process had in them."""
    for name, attributes in MODULE_STATE.items():
        module = sys.modules.get(name)
        for attribute in attributes if module is not None else ():
            container = getattr(module, attribute)
            container.clear()
            if (name, attribute) in saved:
                container.update(saved[name, attribute]) if isinstance(container, dict) \
                    else container.extend(saved[name, attribute])


def _children() -> list[int]:
    """The pids of this process's children (every thread's)."""
    found = []
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(pid) for pid in (task / "children").read_text().split()]
    return found


def _reap_new_children(before: set[int]) -> None:
    """SIGKILL the children started since ``before`` that still run (what PR_SET_PDEATHSIG does
    when mwperf exits), and reap them; not one that changed its user ID (the kernel clears its
    PDEATHSIG: it would outlive mwperf, e.g. mosquitto started as root)."""
    for pid in _children():
        try:
            if pid in before or os.stat(f"/proc/{pid}").st_uid != os.geteuid():
                continue
        except OSError:
            continue
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


@contextlib.contextmanager
def _captured_fds() -> Iterator[dict[str, str]]:
    """fds 1 and 2 onto two anonymous files, fd 0 onto /dev/null, and sys.stdin, sys.stdout,
    sys.stderr over them as an interpreter makes them (stdout block-buffered, stderr
    line-buffered with backslashreplace); all put back afterwards, when the dict yielded gets
    what was written ("stdout", "stderr")."""
    streams = sys.stdin, sys.stdout, sys.stderr
    for stream in streams[1:]:
        with contextlib.suppress(Exception):
            stream.flush()
    out, err = os.memfd_create("mwperf-stdout"), os.memfd_create("mwperf-stderr")
    null = os.open(os.devnull, os.O_RDONLY)
    saved = {fd: os.dup(fd) for fd in (0, 1, 2)}
    encoding = locale.getpreferredencoding(False)
    captured: dict[str, str] = {}
    try:
        for source, fd in ((null, 0), (out, 1), (err, 2)):
            os.dup2(source, fd)
        sys.stdin = open(0, encoding=encoding, closefd=False)
        sys.stdout = open(1, "w", encoding=encoding, closefd=False)
        sys.stderr = open(2, "w", buffering=1, encoding=encoding, errors="backslashreplace",
                          closefd=False)
        yield captured
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdin, sys.stdout, sys.stderr = streams
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)
        captured.update(stdout=_text(out), stderr=_text(err))


def _text(fd: int) -> str:
    """What was written to ``fd``, decoded as subprocess.run(text=True) decodes it (the
    locale's encoding, universal newlines); ``fd`` is closed."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        with open(fd, "rb", closefd=False) as raw:
            data = raw.read()
    finally:
        os.close(fd)
    return io.TextIOWrapper(io.BytesIO(data), encoding=locale.getpreferredencoding(False)).read()


@contextlib.contextmanager
def _fresh_warnings() -> Iterator[None]:
    """Python's default warning filters, warnings printed on stderr (not pytest's capture)."""
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning,
                         DeprecationWarning):
            warnings.simplefilter("ignore", category)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(warnings.formatwarning(message, category, filename, lineno,
                                                        line))

        warnings.showwarning = show
        yield


def _start_watchdog(timeout: float | None, finished: threading.Event,
                    timed_out: threading.Event) -> threading.Thread | None:
    """A thread that, once ``timeout`` has passed with the call unfinished, SIGTERMs the main
    thread every GRACE_S until it is (only while Python handles SIGTERM: never the default
    action, which would end the test process)."""
    if timeout is None:
        return None
    main = threading.main_thread().ident
    assert main is not None

    def watch() -> None:
        if finished.wait(timeout):
            return
        timed_out.set()
        while not finished.is_set():
            if callable(signal.getsignal(signal.SIGTERM)):
                signal.pthread_kill(main, signal.SIGTERM)
            finished.wait(GRACE_S)

    thread = threading.Thread(target=watch, name="mwperf-inprocess-timeout", daemon=True)
    thread.start()
    return thread
