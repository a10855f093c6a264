"""The hooks of a point's part (parts/__init__.py registers the parts)."""

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..agent import Agent
    from ..point import Point
    from ..result_types import RunResult
    from .state import PointState

P = TypeVar("P", bound="Point")

class Part:
    """The hooks; each does nothing unless a part overrides it."""

    name = "part"
    on_graphs = False
    """its hooks also work on a graph run (graph/run.py calls them; issue 38 step 12): start,
    sender_started (the go instant), sender_done (the nodes finished), interrupted, section
    (on the graph result) and files"""

    def wanted(self, cfg: "Point") -> bool:
        """Active for this point."""
        return False

    def validate(self, cfg: P, options: dict[str, Any]) -> P:
        """While the point is built from the user's options (config.build_point): a usage
        error naming the flag for what this part cannot do with the rest of the point; the
        point (possibly completed)."""
        return cfg

    def check(self, cfg: "Point", agent: "Agent") -> None:
        """Before anything starts: what it needs is there (else RunError/UsageError)."""

    def start(self, run: "PointState") -> None:
        """The place, its daemons and the lease are up; no agent runs yet."""

    def given(self, run: "PointState", cfg: P) -> P:
        """The point as the agents are given it (a part may change their settings)."""
        return cfg

    def args(self, run: "PointState", role: str) -> list[str]:
        """Agent arguments this part adds for ``role``."""
        return []

    def command(self, run: "PointState", role: str, argv: list[str]) -> list[str]:
        """The agent's full command line (a part may start it through another program)."""
        return argv

    def env(self, run: "PointState", name: str, env: dict[str, str] | None
            ) -> dict[str, str] | None:
        """The environment of agent ``name`` started on this machine."""
        return env

    def remote_env(self, run: "PointState", role: str, name: str, env: dict[str, str] | None
                   ) -> dict[str, str] | None:
        """The environment of agent ``name`` (``role``) started on a real host: what it names
        must be there (e.g. a preload library copied in ``start``), not on this machine; the
        runner puts it in front of the agent's command there."""
        return env

    def placed_opts(self, run: "PointState", role: str, opts: tuple[str, ...]
                    ) -> tuple[str, ...]:
        """The ``--opt`` settings agent (or graph node) ``role`` needs where it is placed
        (run/placed.py: its transport's ``link_opts``), which come last on its command line and
        so win over any earlier one: a part that must amend one of them (not be overridden by
        it) does it here."""
        return opts

    def remote_files(self, run: "PointState", role: str, name: str) -> list[str]:
        """Files agent ``name`` (``role``) on a real host writes in its scratch folder (its
        working folder: plain names), brought back into the point's work folder when it exits
        (the supervisor removes the scratch folder then)."""
        return []

    def sender_started(self, run: "PointState") -> None:
        """Every agent runs: the measurement is under way."""

    def sender_done(self, run: "PointState") -> None:
        """The sender finished (or was stopped at its time limit)."""

    def interrupted(self, run: "PointState") -> None:
        """The user stopped the point: stop what this part runs, keep nothing half-made."""

    def section(self, run: "PointState", result: "RunResult") -> None:
        """Add this part's section (and warnings) to the merged result."""

    def files(self, run: "PointState") -> dict[str, Any]:
        """What this part leaves to save with the result: Outcome field name -> path(s)."""
        return {}
