//! `--opt security=ca=PATH,cert=PATH,key=PATH,governance=PATH,permissions=PATH`: one
//! DDS-Security identity's files, as every DDS transport that joins a secured domain takes them
//! (fastdds: participant properties; rustdds: its builtin plugins' configuration). `mwperf run
//! --secure auth|sign|encrypt` makes them per run (python/mwperf/security/: one CA, which signs
//! the permissions and the governance too).

use std::path::PathBuf;

use crate::TransportError;

pub const OPT: &str = "security";
/// The files the option names, in the order its help gives them.
pub const KEYS: [&str; 5] = ["ca", "cert", "key", "governance", "permissions"];
pub const HELP: &str = "ca=PATH,cert=PATH,key=PATH,governance=PATH,permissions=PATH: join with DDS-Security (PKI-DH, Access-Permissions, AES-GCM-GMAC) as this identity; the CA signs the permissions too (mwperf run --secure makes them)";

/// One identity's files, each an absolute path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SecurityFiles {
    /// the identity CA, which also signs the governance and the permissions
    pub ca: PathBuf,
    pub cert: PathBuf,
    /// the certificate's private key (unencrypted PEM)
    pub key: PathBuf,
    /// the domain's governance document (S/MIME signed)
    pub governance: PathBuf,
    /// this identity's permissions document (S/MIME signed)
    pub permissions: PathBuf,
}

impl SecurityFiles {
    /// `value` of `--opt security=` for `transport`; a usage error naming what is wrong.
    pub fn parse(transport: &'static str, value: &str) -> Result<SecurityFiles, TransportError> {
        let refuse = |what: String| TransportError::Unsupported {
            transport,
            what: format!("--opt {OPT}={value}: {what} (give {})", form()),
        };
        let mut paths: [Option<PathBuf>; 5] = Default::default();
        for item in value.split(',') {
            let (key, path) = item
                .split_once('=')
                .ok_or_else(|| refuse(format!("'{item}' is not KEY=PATH")))?;
            let at = KEYS
                .iter()
                .position(|k| *k == key.trim())
                .ok_or_else(|| refuse(format!("'{key}' is not one of {}", KEYS.join(", "))))?;
            let path = path.trim();
            if !path.starts_with('/') {
                return Err(refuse(format!("{key}={path} is not an absolute path")));
            }
            paths[at] = Some(PathBuf::from(path));
        }
        let mut take = |i: usize| -> Result<PathBuf, TransportError> {
            paths[i]
                .take()
                .ok_or_else(|| refuse(format!("{}= is missing", KEYS[i])))
        };
        Ok(SecurityFiles {
            ca: take(0)?,
            cert: take(1)?,
            key: take(2)?,
            governance: take(3)?,
            permissions: take(4)?,
        })
    }
}

fn form() -> String {
    KEYS.iter()
        .map(|k| format!("{k}=PATH"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_by_what_it_is() {
        let files = SecurityFiles::parse(
            "fastdds",
            "ca=/p/ca.pem,cert=/p/a.pem,key=/p/a.key,governance=/p/g.p7s,permissions=/p/a.p7s",
        )
        .unwrap();
        assert_eq!(files.ca, PathBuf::from("/p/ca.pem"));
        assert_eq!(files.key, PathBuf::from("/p/a.key"));
        assert_eq!(files.permissions, PathBuf::from("/p/a.p7s"));
    }

    #[test]
    fn a_missing_or_relative_file_is_named() {
        let parse = |v: &str| SecurityFiles::parse("rustdds", v).unwrap_err().to_string();
        let missing = parse("ca=/c,cert=/a,key=/k,governance=/g");
        assert!(missing.contains("permissions= is missing"), "{missing}");
        let relative = parse("ca=c.pem");
        assert!(
            relative.contains("ca=c.pem is not an absolute path"),
            "{relative}"
        );
        let unknown = parse("identity=/x");
        assert!(unknown.contains("'identity' is not one of"), "{unknown}");
    }
}
