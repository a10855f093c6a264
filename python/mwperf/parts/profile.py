"""The profile part (``--profile``): perf samples every local agent and daemon while the sender
runs (a graph: every local node, daemon and command node while the graph is measured); the
result's ``profile`` has each one's flame graph and top functions."""

from typing import TYPE_CHECKING, Any

from ..merge import make_warning
from ..profiling import PROFILE_DIR, Recorder, unavailable, write_profiles
from ..errors import UsageError
from ..procs import interrupts_deferred
from .base import P, Part

if TYPE_CHECKING:
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState


class Profile(Part):
    name = "profile"
    on_graphs = True

    def __init__(self) -> None:
        self.recorder: Recorder | None = None
        self.names: dict[int, str] = {}

    def wanted(self, cfg: "Point") -> bool:
        return cfg.profile

    def start(self, run: "PointState") -> None:
        self.recorder, self.names = None, {}  # a part lives for the process: this point's own

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        if cfg.remote is not None:
            raise UsageError("--profile: samples the processes on this machine only (not with "
                             "--host); run perf on the robot yourself, or measure locally")
        return cfg

    def sender_started(self, run: "PointState") -> None:
        """perf on every local agent and daemon from now on; a warning saying what to change
        when perf cannot sample here."""
        self.recorder, self.names = None, {}
        why = unavailable()
        if why is not None:
            run.warnings.append(make_warning("profile-unavailable", f"--profile: {why}",
                                             "the point was measured without a profile"))
            return
        agents = run.agents.agents if run.agents is not None else []
        self.names = {a.popen.pid: run.shown_name(a.name) for a in agents if run.is_local(a.role)}
        self.names.update({d.popen.pid: d.name for d in run.daemons.daemons
                           if getattr(d, "popen", None) is not None and d.popen.poll() is None})
        with interrupts_deferred():  # a Ctrl-C meanwhile: interrupted() still stops perf
            self.recorder = Recorder(list(self.names), run.workdir / PROFILE_DIR, run.lease)

    def sender_done(self, run: "PointState") -> None:
        if self.recorder is not None:
            failed = self.recorder.stop()
            if failed is not None:
                run.warnings.append(make_warning("profile-failed", failed, "see profile/perf.log"))
                self.recorder = None

    def interrupted(self, run: "PointState") -> None:
        if self.recorder is not None:
            self.recorder.stop()
            self.recorder = None  # an interrupted point keeps what it measured, no profile

    def section(self, run: "PointState", result: "RunResult") -> None:
        if self.recorder is not None:
            result["profile"] = write_profiles(self.recorder, self.names,
                                               run.workdir / PROFILE_DIR)

    def files(self, run: "PointState") -> dict[str, Any]:
        return {"profile_dir": run.workdir / PROFILE_DIR} if self.recorder is not None else {}
