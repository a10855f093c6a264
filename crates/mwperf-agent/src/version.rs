//! The `--version` line: `mwperf-agent <version> (git <rev>) transports: udp,tcp,uds,<middleware>`.
//! The control plane compares the whole line between the local and a remote binary, so the
//! transport list is the one compiled in, in `mwperf-agent transports` order — read from the
//! transports' own registry (Kind::ALL, Kind::built), not listed again here.

use std::sync::OnceLock;

use mwperf_transports::Kind;

/// What clap prints after "mwperf-agent ".
pub fn line() -> &'static str {
    static LINE: OnceLock<String> = OnceLock::new();
    LINE.get_or_init(|| {
        let built: Vec<&str> = Kind::ALL
            .iter()
            .filter(|k| k.built())
            .map(|k| k.name())
            .collect();
        format!(
            "{} (git {}) transports: {}",
            env!("CARGO_PKG_VERSION"),
            env!("MWPERF_GIT_REV"),
            built.join(",")
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_the_built_transports() {
        let (_, list) = super::line().split_once(" transports: ").unwrap();
        let names: Vec<&str> = list.split(',').collect();
        assert_eq!(&names[..3], ["udp", "tcp", "uds"]);
        for k in mwperf_transports::Kind::ALL {
            assert_eq!(names.contains(&k.name()), k.built(), "{}", k.name());
        }
        assert!(!super::line().contains('\n'));
    }
}
