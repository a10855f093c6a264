//! The rcl shim (`shim.c`) compiled for the ROS 2 installation the agent runs with, on first
//! use, into the per-user cache: `$XDG_CACHE_HOME/mwperf/ros2-shim/<distro>-<key>.so` (else
//! `~/.cache/mwperf/...`, where the managed ROS 2 environments live too).
//!
//! Why at run time and not in build.rs: rcl's structs (init options, node / publisher /
//! subscription options with `rmw_qos_profile_t`, the wait set) differ between distributions,
//! and the ROS 2 the agent measures need not exist when it is built (a robot's `/opt/ros`, a
//! managed environment installed later). Compiling against the distribution's own headers
//! means no struct layout is written by hand. The key hashes the shim's source, the compiler,
//! the prefixes, the library folders and librcl.so's size and time, so another distribution,
//! an upgrade or a new shim compiles afresh, and an unchanged one costs a file lookup. A
//! compile writes a file of its own and renames it into place: agents starting together (a
//! ping and its pong) never load a half-written one. The shared object records the library
//! folders as its run path (DT_RPATH), so rcl's own dependencies resolve as the environment
//! gives them even where the dynamic loader read `LD_LIBRARY_PATH` before it was set.
//!
//! The PyPI wheels' librcl needs their message packages' Python bindings
//! (`*__rosidl_generator_py.so`), which use Python's symbols (`PyExc_RuntimeError`, ...) without
//! linking libpython: they expect to be loaded into a Python process. Where librcl names such a
//! library, the shim links the installation's Python (`lib/python3.N` gives the version:
//! `libpython3.N.so.1.0`), so rcl loads into the agent too; a sourced ROS 2 needs nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::installation::{has_rcl, Installation};
use crate::TransportError;

/// The shim: topics (`shim.c`), then services (`service.c`, which uses shim.c's helpers), one
/// translation unit.
const SOURCE: &str = concat!(include_str!("shim.c"), include_str!("service.c"));

/// Where the compiled shims go: `$XDG_CACHE_HOME/mwperf/ros2-shim`, else `~/.cache/...`.
pub(crate) fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache")
        });
    base.join("mwperf").join("ros2-shim")
}

/// FNV-1a, 64 bits: a cache key stable across builds (std's hasher is not).
/// A file's size and modification time: what a cached build keyed on it must change with
/// (the installation's library replaced by another version).
pub(crate) fn file_stamp(meta: &std::fs::Metadata) -> String {
    format!(
        "{}:{:?}",
        meta.len(),
        meta.modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
    )
}

pub(crate) fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.iter().chain(&[0xff]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

fn missing(what: String) -> TransportError {
    TransportError::Missing {
        what,
        install: super::installation::INSTALL.into(),
    }
}

/// The shim for `inst`: from the cache, or compiled now.
pub fn shim(inst: &Installation) -> Result<PathBuf, TransportError> {
    if !inst.prefixes.iter().any(|p| has_rcl(p)) {
        return Err(missing(format!(
            "rcl's headers (include/rcl/rcl/rcl.h) in ROS 2 {}",
            inst.describe()
        )));
    }
    let rcl = inst.library("librcl.so").ok_or_else(|| {
        missing(format!(
            "librcl.so in ROS 2 {} (looked in {})",
            inst.describe(),
            shown(&inst.lib_dirs)
        ))
    })?;
    let meta = std::fs::metadata(&rcl).map_err(|e| missing(format!("{}: {e}", rcl.display())))?;
    let stamp = file_stamp(&meta);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let flags = flags(inst);
    let mut parts: Vec<&[u8]> = vec![SOURCE.as_bytes(), cc.as_bytes(), stamp.as_bytes()];
    parts.extend(flags.iter().map(|f| f.as_bytes()));
    let key = fnv(&parts);
    let dir = cache_dir();
    let name = inst.distro.as_deref().unwrap_or("ros2");
    let so = dir.join(format!("{name}-{key:016x}.so"));
    if so.is_file() {
        return Ok(so);
    }
    std::fs::create_dir_all(&dir).map_err(|e| TransportError::Middleware {
        transport: super::T,
        detail: format!("creating {}: {e}", dir.display()),
    })?;
    crate::preparing::announce(&format!(
        "compiling the rcl shim against ROS 2 {} (first use; kept in {})",
        inst.describe(),
        dir.display()
    ));
    compile(inst, &cc, &flags, &so)?;
    Ok(so)
}

fn shown(paths: &[PathBuf]) -> String {
    let texts: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    texts.join(":")
}

/// The compiler's arguments besides the source and the output: the installation's headers, its
/// libraries, their run path, and libpython where the libraries need it.
fn flags(inst: &Installation) -> Vec<String> {
    let mut f: Vec<String> = ["-O2", "-fPIC", "-shared", "-w"].map(String::from).to_vec();
    f.extend(
        inst.include_dirs()
            .iter()
            .map(|d| format!("-I{}", d.display())),
    );
    f.extend(inst.lib_dirs.iter().map(|d| format!("-L{}", d.display())));
    f.extend(["-lrcl", "-lrmw", "-lrcutils", "-lrosidl_runtime_c", "-ldl"].map(String::from));
    // The message packages' type supports, loaded with the shim (their own dependencies then
    // resolve through its run path; `dlopen` of them later finds them loaded).
    f.push("-Wl,--no-as-needed".into());
    // The service type (service.c): rcl_interfaces comes with rcl itself.
    f.extend(
        [
            "-lrcl_interfaces__rosidl_typesupport_c",
            "-lrcl_interfaces__rosidl_generator_c",
        ]
        .map(String::from),
    );
    for pkg in super::message::PACKAGES {
        if inst
            .library(&format!("lib{pkg}__rosidl_typesupport_c.so"))
            .is_some()
        {
            f.push(format!("-l{pkg}__rosidl_typesupport_c"));
        }
    }
    if let Some(python) = python_needed(inst) {
        f.push(format!("-l:lib{python}.so.1.0"));
    }
    let rpath = shown(&inst.lib_dirs);
    f.push(format!(
        "-Wl,--disable-new-dtags,-rpath,{rpath},-rpath-link,{rpath}"
    ));
    f
}

fn compile(
    inst: &Installation,
    cc: &str,
    flags: &[String],
    so: &Path,
) -> Result<(), TransportError> {
    let fail = |detail: String| TransportError::Middleware {
        transport: super::T,
        detail,
    };
    let tmp = so.with_extension(format!("{}.tmp", std::process::id()));
    let src = so.with_extension(format!("{}.c", std::process::id()));
    std::fs::write(&src, SOURCE).map_err(|e| fail(format!("writing {}: {e}", src.display())))?;
    let mut cmd = Command::new(cc);
    cmd.arg(&src).arg("-o").arg(&tmp).args(flags);
    let out = cmd.output();
    let _ = std::fs::remove_file(&src);
    let out = out.map_err(|e| TransportError::Missing {
        what: format!(
            "a C compiler ({cc}: {e}: the ros2 transport compiles its rcl shim against the distribution's headers on first use)"
        ),
        install: "install one: apt-get install gcc (or set CC)".into(),
    })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let text = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = text.lines().take(6).collect();
        return Err(fail(format!(
            "compiling the rcl shim against ROS 2 {} failed: {}",
            inst.describe(),
            first.join(" | ")
        )));
    }
    std::fs::rename(&tmp, so).map_err(|e| fail(format!("placing {}: {e}", so.display())))
}

/// `python3.N` when the installation's librcl needs Python bindings (the PyPI wheels), from
/// the `lib/python3.N` folder of its prefix.
fn python_needed(inst: &Installation) -> Option<String> {
    let rcl = std::fs::read(inst.library("librcl.so")?).ok()?;
    let marker = b"__rosidl_generator_py.so";
    if !rcl.windows(marker.len()).any(|w| w == marker) {
        return None;
    }
    let mut versions: Vec<String> = inst
        .prefixes
        .iter()
        .filter_map(|p| std::fs::read_dir(p.join("lib")).ok())
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix("python3.")
                .is_some_and(|v| v.parse::<u32>().is_ok())
        })
        .collect();
    versions.sort();
    versions.pop()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_key_changes_with_any_part() {
        let a = super::fnv(&[b"shim", b"cc"]);
        assert_ne!(a, super::fnv(&[b"shim", b"gcc"]));
        assert_ne!(a, super::fnv(&[b"shimc", b"c"]));
        assert_eq!(a, super::fnv(&[b"shim", b"cc"]));
    }
}
