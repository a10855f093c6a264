//! `--opt tls=ca=PATH[,cert=PATH,key=PATH][,mtls=on]`: the files of a TLS link (issue 42,
//! `mwperf run --secure tls|mtls`; python/mwperf/security/tls.py makes them per run):
//! - `ca`: the certificate authority this side trusts (the peer's certificate must chain to it);
//! - `cert`, `key`: this side's own identity (PEM), both or neither: a listener presents it as
//!   its server certificate, a connector under `mtls=on` as its client certificate;
//! - `mtls=on`: mutual TLS: a listener demands a client certificate signed by `ca`, a connector
//!   presents its own.
//!
//! Parsed here once; each middleware hands the files to its TLS stack (zenoh: its link
//! configuration, `transport/link/tls`).

use std::path::PathBuf;

use crate::TransportError;

pub const OPT: &str = "tls";

/// The option's value, checked: absolute paths, an identity whole or absent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TlsFiles {
    pub ca: PathBuf,
    /// This side's certificate and private key.
    pub identity: Option<(PathBuf, PathBuf)>,
    pub mtls: bool,
}

impl TlsFiles {
    /// `--opt tls=VALUE` of `transport`.
    pub fn parse(transport: &'static str, value: &str) -> Result<TlsFiles, TransportError> {
        let refuse = |what: String| TransportError::Unsupported {
            transport,
            what: format!(
                "--opt tls={value}: {what} (give ca=PATH[,cert=PATH,key=PATH][,mtls=on])"
            ),
        };
        let (mut ca, mut cert, mut key, mut mtls) = (None, None, None, false);
        for item in value.split(',') {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| refuse(format!("'{item}' is not KEY=VALUE")))?;
            let (k, v) = (k.trim(), v.trim());
            let path = || -> Result<PathBuf, TransportError> {
                if v.starts_with('/') {
                    Ok(PathBuf::from(v))
                } else {
                    Err(refuse(format!("{k}={v} is not an absolute path")))
                }
            };
            match k {
                "ca" => ca = Some(path()?),
                "cert" => cert = Some(path()?),
                "key" => key = Some(path()?),
                "mtls" => {
                    mtls = match v {
                        "on" | "true" => true,
                        "off" | "false" => false,
                        _ => return Err(refuse(format!("mtls={v} (allowed: on, off)"))),
                    }
                }
                _ => return Err(refuse(format!("'{k}' is not one of ca, cert, key, mtls"))),
            }
        }
        let ca = ca.ok_or_else(|| refuse("ca= is missing".into()))?;
        let identity = match (cert, key) {
            (Some(c), Some(k)) => Some((c, k)),
            (None, None) => None,
            _ => return Err(refuse("cert= and key= go together".into())),
        };
        Ok(TlsFiles { ca, identity, mtls })
    }

    /// The option of `transport` among its `--opt`s, parsed (None: not given).
    pub fn of(
        transport: &'static str,
        value: Option<&str>,
    ) -> Result<Option<TlsFiles>, TransportError> {
        value.map(|v| TlsFiles::parse(transport, v)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forms_of_the_option() {
        let t = TlsFiles::parse("zenoh", "ca=/s/ca.pem").unwrap();
        assert_eq!(
            (t.ca.to_str(), t.identity, t.mtls),
            (Some("/s/ca.pem"), None, false)
        );
        let t =
            TlsFiles::parse("zenoh", "ca=/s/ca.pem, cert=/s/a.pem,key=/s/a.key,mtls=on").unwrap();
        assert_eq!(
            t.identity,
            Some((PathBuf::from("/s/a.pem"), PathBuf::from("/s/a.key")))
        );
        assert!(t.mtls);
        for (bad, says) in [
            ("cert=/a,key=/b", "ca= is missing"),
            ("ca=/a,cert=/b", "go together"),
            ("ca=a.pem", "not an absolute path"),
            ("ca=/a,mtls=maybe", "allowed: on, off"),
            ("ca=/a,pin=/b", "not one of ca, cert, key, mtls"),
            ("ca", "not KEY=VALUE"),
        ] {
            let e = TlsFiles::parse("zenoh", bad).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains(says), "{bad}: {e}");
        }
        assert_eq!(TlsFiles::of("zenoh", None).unwrap(), None);
    }
}
