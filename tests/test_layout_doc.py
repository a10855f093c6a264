"""docs/layout.md names every crate, Python package and top-level Python module (issue 23: it
had fallen behind by six packages)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = (ROOT / "docs" / "layout.md").read_text()
WORDS = set(re.findall(r"[\w.-]+", LAYOUT))


def test_every_crate_is_named():
    crates = [p.name for p in (ROOT / "crates").iterdir() if (p / "Cargo.toml").is_file()]
    assert crates
    missing = [c for c in crates if f"crates/{c}/" not in LAYOUT]
    assert not missing, f"docs/layout.md lacks crates/{missing[0]}/ (and {len(missing) - 1} more)"


def test_every_python_package_and_module_is_named():
    pkg = ROOT / "python" / "mwperf"
    packages = [p.name for p in pkg.iterdir() if p.is_dir() and any(p.glob("*.py"))]
    modules = [p.stem for p in pkg.glob("*.py") if p.stem != "__init__"]
    missing = ([f"{p}/" for p in packages if f"{p}/" not in LAYOUT]
               + [m for m in modules if m not in WORDS])
    assert not missing, f"docs/layout.md does not name: {', '.join(missing)}"


def test_every_script_is_named():
    missing = [p.name for p in (ROOT / "scripts").iterdir()
               if p.is_file() and f"scripts/{p.name}" not in LAYOUT]
    assert not missing, f"docs/layout.md does not name: {', '.join(missing)}"
