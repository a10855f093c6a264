//! ROS 2 through rcl: no daemon, the managed Kilted environment (or a sourced ROS 2). The
//! environment the agent gets from the control plane (`Distribution.child_env` in
//! python/mwperf/ros2: LD_LIBRARY_PATH, RMW_IMPLEMENTATION, MWPERF_ROS2_PREFIX, ...) is asked
//! from that same code once per test binary, before the first ros2 endpoint opens; without a
//! ROS 2 the test fails with mwperf's own line naming the install command. Domains and bases as
//! the other DDS transports' (`dds_fixture`), apart from theirs.
//!
//! The variables are set in this process (`std::env::set_var`) under a `Once`: the ros2 shim
//! records the library folders as its run path, so the loader needs no LD_LIBRARY_PATH from
//! the start; rcl's own look-ups (the RMW, type supports) read the variable when they run.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

use mwperf_transports::Kind;

use super::Fixture;

/// What python/mwperf/ros2 gives a child process (`child_env(base={})`), one KEY=VALUE a line.
const ASK: &str = "import sys\n\
from mwperf import ros2\n\
from mwperf.errors import UsageError\n\
try:\n    env = ros2.pick().child_env(base={})\n\
except UsageError as e:\n    sys.exit(str(e))\n\
print('\\n'.join(f'{k}={v}' for k, v in env.items()))\n";

pub fn fixture() -> Fixture {
    static ENV: Once = Once::new();
    ENV.call_once(set_environment);
    super::cyclonedds::dds_fixture(Kind::Ros2, 50)
}

fn set_environment() {
    let python_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python");
    let out = Command::new("python3")
        .args(["-c", ASK])
        .env("PYTHONPATH", &python_dir)
        .output()
        .unwrap_or_else(|e| panic!("running python3 for mwperf.ros2: {e}"));
    assert!(
        out.status.success(),
        "ros2 tests need a ROS 2: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let text = String::from_utf8(out.stdout).expect("paths and names are UTF-8");
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("unexpected child_env line: {line}"));
        let v = if k == "LD_LIBRARY_PATH" {
            match std::env::var("LD_LIBRARY_PATH") {
                Ok(old) if !old.is_empty() => format!("{v}:{old}"),
                _ => v.to_string(),
            }
        } else {
            v.to_string()
        };
        std::env::set_var(k, v);
    }
}
