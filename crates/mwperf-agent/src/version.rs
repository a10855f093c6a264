//! The `--version` line: `mwperf-agent <version> (git <rev>) transports: udp,tcp,uds,<middleware>`.
//! The control plane compares the whole line between the local and a remote binary, so the
//! middleware list is the one compiled in (cargo features), in `mwperf-agent transports` order.

/// What clap prints after "mwperf-agent ".
pub const VERSION: &str = {
    macro_rules! mw {
        ($f:literal) => {
            if cfg!(feature = $f) {
                concat!(",", $f)
            } else {
                ""
            }
        };
    }
    // const-evaluable concatenation of the optional parts.
    const PARTS: [&str; 9] = [
        concat!(
            env!("CARGO_PKG_VERSION"),
            " (git ",
            env!("MWPERF_GIT_REV"),
            ") transports: udp,tcp,uds"
        ),
        mw!("iceoryx2"),
        mw!("cyclonedds"),
        mw!("fastdds"),
        mw!("rustdds"),
        mw!("zenoh"),
        mw!("mqtt"),
        mw!("foxglove"),
        mw!("ros1"),
    ];
    const LEN: usize = {
        let mut n = 0;
        let mut i = 0;
        while i < PARTS.len() {
            n += PARTS[i].len();
            i += 1;
        }
        n
    };
    const BYTES: [u8; LEN] = {
        let mut out = [0u8; LEN];
        let (mut o, mut i) = (0, 0);
        while i < PARTS.len() {
            let p = PARTS[i].as_bytes();
            let mut j = 0;
            while j < p.len() {
                out[o] = p[j];
                o += 1;
                j += 1;
            }
            i += 1;
        }
        out
    };
    match std::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("version line is ASCII"),
    }
};

#[cfg(test)]
mod tests {
    #[test]
    fn lists_the_built_transports() {
        let (_, list) = super::VERSION.split_once(" transports: ").unwrap();
        let names: Vec<&str> = list.split(',').collect();
        assert_eq!(&names[..3], ["udp", "tcp", "uds"]);
        for k in mwperf_transports::Kind::ALL {
            assert_eq!(names.contains(&k.name()), k.built(), "{}", k.name());
        }
        assert!(!super::VERSION.contains('\n'));
    }
}
