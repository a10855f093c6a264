//! Which ROS 2 the agent uses: the one its environment names, never one it looks for itself.
//! The control plane picks the distribution (`--opt distro`, python/mwperf/ros2) and starts the
//! agent with that distribution's environment (`Distribution.child_env`): for mwperf's managed
//! environments `MWPERF_ROS2_PREFIX` / `MWPERF_ROS2_DISTRO` and `LD_LIBRARY_PATH`; a sourced
//! ROS 2 (`source /opt/ros/<distro>/setup.bash`) brings `AMENT_PREFIX_PATH` and `ROS_DISTRO`.

use std::path::{Path, PathBuf};

use crate::TransportError;

/// The install prefixes (colon-separated) of a managed environment, set by the control plane.
pub const PREFIX_ENV: &str = "MWPERF_ROS2_PREFIX";
/// The distribution's name (kilted, jazzy), set by the control plane with [`PREFIX_ENV`].
pub const DISTRO_ENV: &str = "MWPERF_ROS2_DISTRO";
/// What a sourced ROS 2 sets.
const AMENT_PREFIX_ENV: &str = "AMENT_PREFIX_PATH";
const ROS_DISTRO_ENV: &str = "ROS_DISTRO";

/// How a person gets a ROS 2 the agent can use.
pub const INSTALL: &str = "install mwperf's own: python3 -m mwperf.ros2.install kilted (or: make setup), and run through `mwperf run --transport ros2`, which gives the agent its environment; or source a ROS 2 (source /opt/ros/<distro>/setup.bash)";

/// One ROS 2 installation as the environment names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// kilted, jazzy, ... (None: the environment does not say)
    pub distro: Option<String>,
    /// Install prefixes, each with `include/<package>/` and `lib/`.
    pub prefixes: Vec<PathBuf>,
    /// Where its shared libraries are: each prefix's `lib/`, then `LD_LIBRARY_PATH`.
    pub lib_dirs: Vec<PathBuf>,
}

impl Installation {
    /// The installation this process's environment names.
    pub fn from_env() -> Result<Installation, TransportError> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let (prefixes, distro) = match var(PREFIX_ENV) {
            Some(p) => (p, var(DISTRO_ENV)),
            None => match var(AMENT_PREFIX_ENV) {
                Some(p) => (p, var(ROS_DISTRO_ENV)),
                None => {
                    return Err(TransportError::Missing {
                        what: format!("ROS 2 (neither ${PREFIX_ENV} nor ${AMENT_PREFIX_ENV} is set in the agent's environment)"),
                        install: INSTALL.into(),
                    })
                }
            },
        };
        Ok(Installation::new(
            distro,
            split(&prefixes),
            &std::env::var("LD_LIBRARY_PATH").unwrap_or_default(),
        ))
    }

    /// From its parts (`ld_library_path` as the variable holds it).
    pub fn new(distro: Option<String>, prefixes: Vec<PathBuf>, ld_library_path: &str) -> Self {
        let mut lib_dirs: Vec<PathBuf> = prefixes.iter().map(|p| p.join("lib")).collect();
        for dir in split(ld_library_path) {
            if !lib_dirs.contains(&dir) {
                lib_dirs.push(dir);
            }
        }
        lib_dirs.retain(|d| d.is_dir());
        Installation {
            distro,
            prefixes,
            lib_dirs,
        }
    }

    /// `-I` folders: every package's folder under each prefix's `include/` (ROS 2 installs a
    /// package's headers in `include/<package>/<package>/`).
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = Vec::new();
        for prefix in &self.prefixes {
            let Ok(entries) = std::fs::read_dir(prefix.join("include")) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect();
            found.sort();
            dirs.extend(found);
        }
        dirs
    }

    /// The first `name` in the library folders.
    pub fn library(&self, name: &str) -> Option<PathBuf> {
        self.lib_dirs
            .iter()
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    }

    /// `kilted (/root/.cache/mwperf/ros2/kilted)` for messages.
    pub fn describe(&self) -> String {
        let prefixes: Vec<String> = self
            .prefixes
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        format!(
            "{} ({})",
            self.distro.as_deref().unwrap_or("unnamed ROS 2"),
            prefixes.join(":")
        )
    }
}

fn split(paths: &str) -> Vec<PathBuf> {
    paths
        .split(':')
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Whether `dir` holds rcl's headers.
pub fn has_rcl(prefix: &Path) -> bool {
    prefix.join("include/rcl/rcl/rcl.h").is_file() || prefix.join("include/rcl/rcl.h").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lib_dirs_are_the_prefixes_then_the_library_path_once_each() {
        let tmp = std::env::temp_dir().join(format!("mwperf-ros2-inst-{}", std::process::id()));
        let (a, b) = (tmp.join("a"), tmp.join("b"));
        std::fs::create_dir_all(a.join("lib")).unwrap();
        std::fs::create_dir_all(b.join("include/rcl")).unwrap();
        std::fs::create_dir_all(b.join("include/rmw")).unwrap();
        let path = format!("{}:{}::/nonexistent", a.join("lib").display(), b.display());
        let inst = Installation::new(Some("kilted".into()), vec![a.clone(), b.clone()], &path);
        assert_eq!(inst.lib_dirs, vec![a.join("lib"), b.clone()]);
        assert_eq!(
            inst.include_dirs(),
            vec![b.join("include/rcl"), b.join("include/rmw")]
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
