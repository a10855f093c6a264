"""One line of the doctor's report: what was checked, ok / missing / warn, and the fix."""

from dataclasses import asdict, dataclass
from typing import Any

STATUSES = ("ok", "missing", "warn")


@dataclass(frozen=True)
class Finding:
    """One line of the doctor's report."""

    name: str
    status: str
    """ok, missing (absent or not working) or warn (works, but not as a measurement wants)"""
    detail: str
    hint: str | None = None
    """how to fix it (an apt-get line, a modprobe, ...) when it is not ok"""
    needed: bool = False
    """the default suite cannot run without it"""

    @property
    def blocking(self) -> bool:
        return self.needed and self.status == "missing"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
