//! `--opt distro=jazzy|kilted`: the transport's shim (`shim.cpp` with `compat.hpp`) compiled on
//! first use against the Fast DDS of a ROS 2 distribution's RMW — the headers and libraries its
//! rmw_fastrtps_cpp is built with (the PyPI wheels: Jazzy's libfastrtps 2.14, Kilted's libfastdds
//! 3.2) — instead of Debian's 2.9 that build.rs compiles it against. So raw Fast DDS and
//! `--transport ros2` measure the same Fast DDS, and what ROS 2 adds on top (rcl, the RMW, the
//! type support) is the difference between them.
//!
//! The distribution is the one the agent's environment names (the control plane starts the agent
//! with it, as for `--transport ros2`: [`Installation::from_env`]); the compiled object goes to
//! the per-user cache beside the rcl shims, `~/.cache/mwperf/fastdds-shim/<distro>-<key>.so`,
//! keyed by the sources, the compiler, the flags and the Fast DDS library's size and time (an
//! unchanged one costs a file lookup). A compile writes files of its own and renames the result
//! into place, so agents starting together never load a half-written one. The object records
//! the library folders as its run path: the distribution's Fast DDS is what it loads.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::middleware::ros2::compile::{cache_dir, file_stamp, fnv};
use crate::middleware::ros2::installation::{Installation, INSTALL};
use crate::TransportError;

const SHIM: &str = include_str!("shim.cpp");
const COMPAT: &str = include_str!("compat.hpp");
const T: &str = "fastdds";

fn fail(detail: String) -> TransportError {
    TransportError::Middleware {
        transport: T,
        detail,
    }
}

/// The Fast DDS library of `inst`: libfastdds (3.x) or libfastrtps (2.x), with its `-l` name.
fn library(inst: &Installation) -> Result<(PathBuf, &'static str), TransportError> {
    for (file, name) in [("libfastdds.so", "fastdds"), ("libfastrtps.so", "fastrtps")] {
        if let Some(path) = inst.library(file) {
            return Ok((path, name));
        }
    }
    Err(TransportError::Missing {
        what: format!(
            "Fast DDS (libfastdds.so or libfastrtps.so) in ROS 2 {} (looked in {}): --opt distro measures the Fast DDS of that distribution's rmw_fastrtps_cpp",
            inst.describe(),
            shown(&inst.lib_dirs)
        ),
        install: INSTALL.into(),
    })
}

fn shown(paths: &[PathBuf]) -> String {
    let texts: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    texts.join(":")
}

/// The compiler's arguments besides the source and the output.
fn flags(inst: &Installation, lib: &str) -> Vec<String> {
    let mut f: Vec<String> = ["-std=c++17", "-O2", "-fPIC", "-shared", "-w"]
        .map(String::from)
        .to_vec();
    // Each prefix's include/ first, so its fastdds/ and fastcdr/ shadow the system's.
    f.extend(
        inst.prefixes
            .iter()
            .map(|p| format!("-I{}", p.join("include").display())),
    );
    f.extend(inst.lib_dirs.iter().map(|d| format!("-L{}", d.display())));
    f.push(format!("-l{lib}"));
    f.push("-lfastcdr".into());
    let rpath = shown(&inst.lib_dirs);
    f.push(format!(
        "-Wl,--disable-new-dtags,-rpath,{rpath},-rpath-link,{rpath}"
    ));
    f
}

/// The shim compiled for `inst`: from the cache, or compiled now.
pub fn shim(inst: &Installation) -> Result<PathBuf, TransportError> {
    let (path, lib) = library(inst)?;
    let meta = std::fs::metadata(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let stamp = file_stamp(&meta);
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let flags = flags(inst, lib);
    let mut parts: Vec<&[u8]> = vec![
        SHIM.as_bytes(),
        COMPAT.as_bytes(),
        cxx.as_bytes(),
        stamp.as_bytes(),
    ];
    parts.extend(flags.iter().map(|f| f.as_bytes()));
    let key = fnv(&parts);
    let dir = cache_dir().with_file_name("fastdds-shim");
    let name = inst.distro.as_deref().unwrap_or("ros2");
    let so = dir.join(format!("{name}-{key:016x}.so"));
    if so.is_file() {
        return Ok(so);
    }
    crate::preparing::announce(&format!(
        "compiling the Fast DDS shim against ROS 2 {} (first use; kept in {})",
        inst.describe(),
        dir.display()
    ));
    compile(inst, &cxx, &flags, &dir, &so)?;
    Ok(so)
}

fn compile(
    inst: &Installation,
    cxx: &str,
    flags: &[String],
    dir: &Path,
    so: &Path,
) -> Result<(), TransportError> {
    // The sources in a folder of this process's own (shim.cpp includes "compat.hpp" beside it).
    let work = dir.join(format!("build-{}", std::process::id()));
    std::fs::create_dir_all(&work)
        .map_err(|e| fail(format!("creating {}: {e}", work.display())))?;
    let result = (|| {
        let src = work.join("shim.cpp");
        for (file, text) in [("shim.cpp", SHIM), ("compat.hpp", COMPAT)] {
            std::fs::write(work.join(file), text)
                .map_err(|e| fail(format!("writing {}: {e}", work.join(file).display())))?;
        }
        let tmp = work.join("shim.so");
        let out = Command::new(cxx)
            .arg(&src)
            .arg("-o")
            .arg(&tmp)
            .args(flags)
            .output()
            .map_err(|e| TransportError::Missing {
                what: format!(
                    "a C++ compiler ({cxx}: {e}: --opt distro compiles the Fast DDS shim against the distribution's Fast DDS on first use)"
                ),
                install: "install one: apt-get install g++ (or set CXX)".into(),
            })?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr);
            let first: Vec<&str> = text
                .lines()
                .filter(|l| l.contains("error"))
                .take(4)
                .collect();
            return Err(fail(format!(
                "compiling the Fast DDS shim against ROS 2 {} failed: {}",
                inst.describe(),
                first.join(" | ")
            )));
        }
        std::fs::rename(&tmp, so).map_err(|e| fail(format!("placing {}: {e}", so.display())))
    })();
    let _ = std::fs::remove_dir_all(&work);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefix with `include/` and a `lib/` holding `files`.
    fn prefix(name: &str, files: &[&str]) -> (PathBuf, Installation) {
        let dir =
            std::env::temp_dir().join(format!("mwperf-fd-wheel-{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("include")).unwrap();
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        for f in files {
            std::fs::write(dir.join("lib").join(f), b"").unwrap();
        }
        let inst = Installation::new(Some("kilted".into()), vec![dir.clone()], "");
        (dir, inst)
    }

    #[test]
    fn fast_dds_3_is_libfastdds_2_is_libfastrtps_none_is_an_install_line() {
        let (three, inst) = prefix("3", &["libfastdds.so", "libfastcdr.so"]);
        assert_eq!(
            library(&inst).unwrap(),
            (three.join("lib/libfastdds.so"), "fastdds")
        );
        let f = flags(&inst, "fastdds");
        assert!(f.contains(&format!("-I{}", three.join("include").display())));
        assert!(f.contains(&"-lfastdds".to_string()) && f.contains(&"-lfastcdr".to_string()));
        assert!(f
            .iter()
            .any(|a| a.contains(&format!("-rpath,{}", three.join("lib").display()))));
        let (two, inst) = prefix("2", &["libfastrtps.so"]);
        assert_eq!(library(&inst).unwrap().1, "fastrtps");
        let (none, inst) = prefix("none", &[]);
        match library(&inst) {
            Err(TransportError::Missing { what, install }) => {
                assert!(what.contains("libfastdds.so or libfastrtps.so"), "{what}");
                assert_eq!(install, INSTALL);
            }
            other => panic!("{other:?}"),
        }
        for d in [three, two, none] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }
}
