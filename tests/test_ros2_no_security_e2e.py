"""DDS-Security and ROS 2 here (issue 42): ``--secure auth|sign|encrypt --transport ros2`` is
one usage error naming why, and the why holds: the installed ROS 2 wheels' Fast DDS libraries
(what rmw_fastrtps_cpp loads) carry no DDS-Security plugin, while Debian's Fast DDS, which
``--transport fastdds`` loads, does. Should a wheel gain the plugins, the first test fails and
the refusal must go."""

from pathlib import Path

import pytest

from conftest import run_mwperf
from mwperf.ros2 import distributions
from mwperf.security.modes import NO_DDS_SECURITY

PLUGIN = b"builtin.PKI-DH"
"""the DDS-Security authentication plugin's name, in every Fast DDS library built with it"""


def fast_dds_libraries(folders: tuple[Path, ...]) -> list[Path]:
    return [p for folder in folders for p in folder.glob("libfast*.so*")
            if "cdr" not in p.name and not p.is_symlink()]


def test_the_ros2_wheels_fast_dds_has_no_dds_security_and_debians_has() -> None:
    found = [d for d in distributions.find({}) if d.name in ("jazzy", "kilted")]
    assert found, "no ROS 2 distribution installed (make test installs them)"
    for distribution in found:
        libraries = fast_dds_libraries(distribution.lib_dirs)
        assert libraries, distribution.describe()
        for library in libraries:
            assert PLUGIN not in library.read_bytes(), library
    debian = fast_dds_libraries(tuple(Path("/usr/lib").glob("*-linux-gnu*")))
    assert debian and all(PLUGIN in library.read_bytes() for library in debian), debian


@pytest.mark.parametrize("mode", ["auth", "encrypt"])
def test_ros2_under_a_dds_mode_is_a_usage_error_naming_why(fake_env: dict[str, str],
                                                           mode: str) -> None:
    done = run_mwperf("run", "--transport", "ros2", "--secure", mode, "--no-save",
                      env={**fake_env, "FAKE_AGENT_TRANSPORTS": "ros2"})
    assert done.returncode == 2
    assert done.stderr.strip() == (f"mwperf: error: --secure {mode}: not with --transport ros2: "
                                   f"{NO_DDS_SECURITY['ros2']}")
    assert "no builtin.PKI-DH" in NO_DDS_SECURITY["ros2"]  # what the test above checks
