//! Build step for the Cyclone DDS transport (cargo feature `cyclonedds`) and the Fast DDS one
//! (feature `fastdds`: its C++ shim, see `fastdds::build` below), and nothing else.
//!
//! No bindgen/libclang: `idlc` (Debian cyclonedds-tools) turns `idl/mwperf_msgs.idl` into C (the
//! type's struct and its topic descriptor), the `cc` crate compiles that plus a small layout probe
//! (sizeof/offsetof of the structs the hand-written FFI mirrors, checked by a unit test). The
//! generated C is data only (the type's serializer ops), so nothing links libddsc: the transport
//! opens it at run time (`ffi::api`), and an agent built with it still starts where Cyclone DDS is
//! not installed. When idlc or the headers are missing the build still succeeds (with a cargo
//! warning) and the transport fails at run time with the install line, so people building without
//! Cyclone DDS are not blocked.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The cfg the Rust side checks: set only when the types were generated and compiled.
    println!("cargo:rustc-check-cfg=cfg(mwperf_cyclonedds)");
    println!("cargo:rustc-check-cfg=cfg(mwperf_fastdds)");
    if std::env::var_os("CARGO_FEATURE_CYCLONEDDS").is_some() {
        #[cfg(feature = "cyclonedds")]
        cyclonedds::build();
    }
    if std::env::var_os("CARGO_FEATURE_FASTDDS").is_some() {
        #[cfg(feature = "fastdds")]
        fastdds::build();
    }
}

/// The Fast DDS shim: `src/middleware/fastdds/shim.cpp` compiled with the C++ compiler the `cc`
/// crate picks into a shared object linked to libfastrtps/libfastcdr (OUT_DIR/libmwperf_fastdds.so),
/// which the agent embeds and loads at run time (`fastdds/ffi.rs`). Without the headers or the
/// libraries the build still succeeds (with a cargo warning) and the transport reports the
/// install line at run time, like cyclonedds.
#[cfg(feature = "fastdds")]
mod fastdds {
    use std::path::PathBuf;
    use std::process::Command;

    const SHIM: &str = "src/middleware/fastdds/shim.cpp";
    const INSTALL: &str = "apt-get install libfastrtps-dev libfastcdr-dev";

    pub fn build() {
        println!("cargo:rerun-if-changed={SHIM}");
        println!("cargo:rerun-if-changed=src/middleware/fastdds/compat.hpp");
        match try_build() {
            Ok(()) => println!("cargo:rustc-cfg=mwperf_fastdds"),
            Err(why) => println!("cargo:warning=fastdds transport built without Fast DDS ({why}); it will report that at run time. Install it: {INSTALL}"),
        }
    }

    fn try_build() -> Result<(), String> {
        if !std::path::Path::new("/usr/include/fastdds/dds/domain/DomainParticipant.hpp").is_file()
            && std::env::var_os("FASTDDS_INCLUDE").is_none()
        {
            return Err(
                "no Fast DDS headers (/usr/include/fastdds; or set FASTDDS_INCLUDE)".into(),
            );
        }
        let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?);
        let so = out.join("libmwperf_fastdds.so");
        let compiler = cc::Build::new().cpp(true).get_compiler();
        let mut cmd = Command::new(compiler.path());
        cmd.args(["-std=c++17", "-O2", "-fPIC", "-shared"]);
        if let Some(dir) = std::env::var_os("FASTDDS_INCLUDE") {
            cmd.arg("-I").arg(dir);
        }
        cmd.arg(SHIM)
            .arg("-o")
            .arg(&so)
            .args(["-lfastrtps", "-lfastcdr", "-s"]);
        let res = cmd
            .output()
            .map_err(|e| format!("running {}: {e}", compiler.path().display()))?;
        if !res.status.success() {
            let text = String::from_utf8_lossy(&res.stderr);
            let first: Vec<&str> = text.lines().take(5).collect();
            return Err(format!("compiling {SHIM} failed: {}", first.join(" | ")));
        }
        Ok(())
    }
}

#[cfg(feature = "cyclonedds")]
mod cyclonedds {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    const INSTALL: &str = "apt-get install cyclonedds-dev cyclonedds-tools";
    const IDL: &str = "idl/mwperf_msgs.idl";
    /// The probe's type-agnostic topic descriptor (C: the descriptor's fields are const).
    const RAW_TYPE: &str = "src/middleware/cyclonedds/probe/raw_type.c";
    /// The sertype of `--opt ros2-type` (serialized samples the transport writes and reads).
    const CDR_TYPE: &str = "src/middleware/cyclonedds/cdr_type.c";

    /// Generate and compile; on any missing piece warn and leave the cfg unset.
    pub fn build() {
        println!("cargo:rerun-if-changed=idl");
        println!("cargo:rerun-if-changed={RAW_TYPE}");
        println!("cargo:rerun-if-changed={CDR_TYPE}");
        println!("cargo:rerun-if-env-changed=IDLC");
        println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
        match try_build() {
            Ok(()) => println!("cargo:rustc-cfg=mwperf_cyclonedds"),
            Err(why) => {
                println!("cargo:warning=cyclonedds transport built without Cyclone DDS ({why}); it will report that at run time. Install it: {INSTALL}");
            }
        }
    }

    fn try_build() -> Result<(), String> {
        let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?);
        let idlc = find_idlc().ok_or("idlc not found (set IDLC or put it on PATH)")?;
        let lib = Library::probe()?;
        generate_types(&idlc, &out, &lib)?;
        let probe = out.join("layout_probe.c");
        std::fs::write(&probe, LAYOUT_PROBE)
            .map_err(|e| format!("writing {}: {e}", probe.display()))?;

        let mut cc = cc::Build::new();
        cc.file(out.join("mwperf_msgs.c"))
            .file(&probe)
            .file(RAW_TYPE)
            .file(CDR_TYPE)
            .include(&out)
            .warnings(false);
        for dir in &lib.include_dirs {
            cc.include(dir);
        }
        for (k, v) in &lib.defines {
            cc.define(k, v.as_deref());
        }
        cc.try_compile("mwperf_cyclonedds_types")
            .map_err(|e| format!("compiling the generated C: {e}"))?;
        Ok(())
    }

    /// `$IDLC`, else `idlc` on PATH (Debian: /usr/bin/idlc from cyclonedds-tools).
    fn find_idlc() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os("IDLC") {
            return Some(PathBuf::from(p));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|d| d.join("idlc"))
            .find(|p| p.is_file())
    }

    /// `idlc -l c -x final -o OUT idl/mwperf_msgs.idl` → OUT/mwperf_msgs.{c,h}.
    fn generate_types(idlc: &Path, out: &Path, lib: &Library) -> Result<(), String> {
        let mut cmd = Command::new(idlc);
        cmd.args(["-l", "c", "-x", "final", "-o"]).arg(out).arg(IDL);
        for dir in &lib.include_dirs {
            cmd.arg("-I").arg(dir);
        }
        let res = cmd
            .output()
            .map_err(|e| format!("running {}: {e}", idlc.display()))?;
        if !res.status.success() {
            return Err(format!(
                "{} failed: {}",
                idlc.display(),
                String::from_utf8_lossy(&res.stderr).trim()
            ));
        }
        if !out.join("mwperf_msgs.c").is_file() {
            return Err(format!("{} did not write mwperf_msgs.c", idlc.display()));
        }
        Ok(())
    }

    /// Where the libddsc headers are: pkg-config `CycloneDDS`, else the system default paths.
    struct Library {
        include_dirs: Vec<PathBuf>,
        defines: Vec<(String, Option<String>)>,
    }

    impl Library {
        fn probe() -> Result<Library, String> {
            let mut lib = Library {
                include_dirs: vec![],
                defines: vec![],
            };
            let flags = Command::new("pkg-config")
                .args(["--cflags", "CycloneDDS"])
                .output();
            match flags {
                Ok(o) if o.status.success() => {
                    for flag in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                        if let Some(d) = flag.strip_prefix("-I") {
                            lib.include_dirs.push(d.into());
                        } else if let Some(d) = flag.strip_prefix("-D") {
                            let (k, v) = d
                                .split_once('=')
                                .map_or((d, None), |(k, v)| (k, Some(v.to_string())));
                            lib.defines.push((k.to_string(), v));
                        }
                    }
                }
                _ => {
                    // No pkg-config (or no .pc): accept the system headers if they are there.
                    if !Path::new("/usr/include/dds/dds.h").is_file() {
                        return Err("libddsc not found (pkg-config CycloneDDS failed, no /usr/include/dds/dds.h)".into());
                    }
                    lib.defines.push(("DDS_NDEBUG".into(), None));
                }
            }
            Ok(lib)
        }
    }

    /// Sizes and offsets of the C structs `ffi.rs` mirrors, in the order `ffi::layout` expects.
    const LAYOUT_PROBE: &str = r#"
#include <stddef.h>
#include "dds/dds.h"
#include "mwperf_msgs.h"

static const size_t layout[] = {
  sizeof (mwperf_msgs_msg_dds__Bytes_),
  offsetof (mwperf_msgs_msg_dds__Bytes_, data),
  offsetof (mwperf_msgs_msg_dds__Bytes_, time),
  offsetof (mwperf_msgs_msg_dds__Bytes_, id),
  sizeof (dds_sequence_octet),
  offsetof (dds_sequence_octet, _length),
  offsetof (dds_sequence_octet, _buffer),
  offsetof (dds_sequence_octet, _release),
  sizeof (dds_sample_info_t),
  offsetof (dds_sample_info_t, valid_data),
  offsetof (dds_sample_info_t, source_timestamp),
  offsetof (dds_sample_info_t, absolute_generation_rank),
  sizeof (dds_publication_matched_status_t),
  offsetof (dds_publication_matched_status_t, current_count),
  sizeof (dds_subscription_matched_status_t),
  offsetof (dds_subscription_matched_status_t, current_count),
  sizeof (rmw_dds_common_msg_dds__NodeEntitiesInfo_),
  offsetof (rmw_dds_common_msg_dds__NodeEntitiesInfo_, node_name),
  offsetof (rmw_dds_common_msg_dds__NodeEntitiesInfo_, reader_gid_seq),
  offsetof (rmw_dds_common_msg_dds__NodeEntitiesInfo_, writer_gid_seq),
  sizeof (rmw_dds_common_msg_dds__ParticipantEntitiesInfo_),
  offsetof (rmw_dds_common_msg_dds__ParticipantEntitiesInfo_, node_entities_info_seq),
  sizeof (mwperf_msgs_srv_dds__Bytes_Request_),
  offsetof (mwperf_msgs_srv_dds__Bytes_Request_, seq),
  offsetof (mwperf_msgs_srv_dds__Bytes_Request_, data),
  sizeof (mwperf_msgs_srv_dds__Bytes_Response_),
  offsetof (mwperf_msgs_srv_dds__Bytes_Response_, seq),
  offsetof (mwperf_msgs_srv_dds__Bytes_Response_, data),
  sizeof (dds_builtintopic_participant_t),
  offsetof (dds_builtintopic_participant_t, qos),
  sizeof (dds_builtintopic_endpoint_t),
  offsetof (dds_builtintopic_endpoint_t, participant_instance_handle),
  offsetof (dds_builtintopic_endpoint_t, topic_name),
  offsetof (dds_builtintopic_endpoint_t, type_name),
  offsetof (dds_builtintopic_endpoint_t, qos),
  sizeof (dds_sample_lost_status_t),
};

const size_t *mwperf_cyclonedds_layout (size_t *n)
{
  *n = sizeof (layout) / sizeof (layout[0]);
  return layout;
}
"#;
}
