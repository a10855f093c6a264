//! What an endpoint is opened with, in zenoh's terms: the `--opt` options (mode, express), the
//! QoS mapping, and the session configuration (always pinned: no multicast scouting, explicit
//! listen/connect endpoints only, so nothing leaves through other interfaces).

use zenoh::qos::CongestionControl;
use zenoh::Config;

use super::address::Address;
use super::{middleware_error, NAME};
use crate::tls_files::{self, TlsFiles};
use crate::{Durability, History, Reliability, Spec, TransportError};

/// How the session reaches its peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Direct TCP session: the listening side (pong/sub) listens on the address, the other connects.
    Peer,
    /// Both sides connect to a zenoh router at the address (`mwperf-agent router`).
    Client,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Peer => "peer",
            Mode::Client => "client",
        }
    }
}

/// The checked settings of one endpoint.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: Mode,
    /// Publisher `express`: send each message at once instead of batching (z_ping's default).
    pub express: bool,
    /// reliable → Block (the publisher waits for room), best-effort → Drop (zenoh drops instead).
    pub congestion: CongestionControl,
    /// keep-last N → Some(N): a ring of N samples per subscriber (oldest dropped when the
    /// reader lags); keep-all → None: a FIFO that blocks zenoh's receiving thread when full, so
    /// a reliable (Block) publisher is held back instead of the reader dropping.
    pub depth: Option<usize>,
    /// Messages as CDR samples of the DDS type (what zenoh-plugin-ros2dds forwards).
    pub cdr: bool,
    /// `--opt tls=`: the files of a `tls/` or `quic/` endpoint (zenoh's TLS link over TCP, or
    /// its QUIC link over UDP: rustls either way), None on `tcp/`.
    pub tls: Option<TlsFiles>,
    /// `--opt link=`: the link the endpoint must name (what `mwperf run` chose), None: any.
    pub link: Option<String>,
}

/// The links an endpoint may name: plain TCP, TLS over TCP, QUIC (TLS 1.3 over UDP).
pub const LINKS: [&str; 3] = ["tcp", "tls", "quic"];

fn unsupported(what: impl Into<String>) -> TransportError {
    TransportError::Unsupported {
        transport: NAME,
        what: what.into(),
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool, TransportError> {
    match value {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(unsupported(format!(
            "'--opt {key}={value}' (allowed values: true, false)"
        ))),
    }
}

impl Settings {
    pub fn from_spec(spec: &Spec) -> Result<Settings, TransportError> {
        let opts = spec.options_of(&super::super::zenoh_descriptor::DESCRIPTOR)?;
        let mode = match opts.get("mode") {
            None | Some("peer") => Mode::Peer,
            Some("client") => Mode::Client,
            Some(other) => return Err(unsupported(format!("'--opt mode={other}' (allowed: peer, client; a router is `mwperf-agent router --transport zenoh`)"))),
        };
        let express = opts
            .get("express")
            .map_or(Ok(true), |v| parse_bool("express", v))?;
        let cdr = opts
            .get("cdr")
            .map_or(Ok(false), |v| parse_bool("cdr", v))?;
        let congestion = match spec.qos.reliability {
            Reliability::Reliable => CongestionControl::Block,
            Reliability::BestEffort => CongestionControl::Drop,
        };
        let depth = match spec.qos.history {
            History::KeepLast(n) => Some(n as usize),
            History::KeepAll => None,
        };
        let tls = TlsFiles::of(NAME, opts.get(tls_files::OPT))?;
        let link = match opts.get("link") {
            None => None,
            Some(l) if LINKS.contains(&l) => Some(l.to_string()),
            Some(other) => {
                return Err(unsupported(format!(
                    "'--opt link={other}' (allowed: {})",
                    LINKS.join(", ")
                )))
            }
        };
        if spec.qos.durability == Durability::TransientLocal {
            return Err(unsupported("--durability transient-local (core zenoh keeps no history for late joiners; use --durability volatile)"));
        }
        Ok(Settings {
            mode,
            express,
            congestion,
            depth,
            cdr,
            tls,
            link,
        })
    }
}

/// A `tls/` or `quic/` endpoint has its files and a `tcp/` one none; a listener on either (a
/// peer pong or sub, a router) has the certificate it presents as the server's; `link` (the
/// `--opt link` given, if any) is the endpoint's own. Refused up front: zenoh would say "No
/// private key found" or fall back to what the other link kind does.
pub fn check_link(
    address: &Address,
    tls: Option<&TlsFiles>,
    listens: bool,
    link: Option<&str>,
) -> Result<(), TransportError> {
    let proto = address.endpoint.split('/').next().unwrap_or("");
    if let Some(link) = link.filter(|l| *l != proto) {
        return Err(unsupported(format!(
            "--opt link={link} with a {proto}/ endpoint ({}): the endpoint names its link",
            address.endpoint
        )));
    }
    let secured = proto == "tls" || proto == "quic";
    match (secured, tls) {
        (true, None) => Err(unsupported(format!(
            "{}: a {proto}/ endpoint needs --opt tls=ca=PATH[,cert=PATH,key=PATH][,mtls=on]",
            address.endpoint
        ))),
        (true, Some(t)) if listens && t.identity.is_none() => Err(unsupported(format!(
            "{}: a listener on a {proto}/ endpoint presents a certificate: give --opt tls=...,cert=PATH,key=PATH",
            address.endpoint
        ))),
        (true, Some(t)) if t.mtls && t.identity.is_none() => Err(unsupported(format!(
            "{}: --opt tls=...,mtls=on presents this side's certificate: give cert=PATH,key=PATH",
            address.endpoint
        ))),
        (true, Some(_)) | (false, None) => Ok(()),
        (false, Some(_)) => Err(unsupported(format!(
            "--opt tls with a {proto}/ endpoint ({}): TLS runs on tls/HOST:PORT and quic/HOST:PORT endpoints",
            address.endpoint
        ))),
    }
}

/// The TLS keys of a session configuration (zenoh-config's `transport/link/tls`, read by its
/// TLS link): the CA to trust, the server's name checked against its certificate, and this
/// side's identity, presented as the server's when listening and, under mtls, as the client's
/// when connecting.
fn tls_entries(tls: &TlsFiles) -> Vec<(&'static str, String)> {
    let path = |p: &std::path::Path| json_string(&p.display().to_string());
    let mut entries = vec![
        ("transport/link/tls/root_ca_certificate", path(&tls.ca)),
        ("transport/link/tls/enable_mtls", tls.mtls.to_string()),
        ("transport/link/tls/verify_name_on_connect", "true".into()),
    ];
    if let Some((cert, key)) = &tls.identity {
        entries.push(("transport/link/tls/listen_certificate", path(cert)));
        entries.push(("transport/link/tls/listen_private_key", path(key)));
        entries.push(("transport/link/tls/connect_certificate", path(cert)));
        entries.push(("transport/link/tls/connect_private_key", path(key)));
    }
    entries
}

/// A session configuration: `mode` ("peer", "client", "router"), listening on `listen` and
/// connecting to `connect` (each at most one endpoint), multicast scouting off.
pub fn session_config(
    mode: &str,
    listen: Option<&str>,
    connect: Option<&str>,
    tls: Option<&TlsFiles>,
) -> Result<Config, TransportError> {
    let list = |e: Option<&str>| match e {
        Some(e) => format!("[{}]", json_string(e)),
        None => "[]".to_string(),
    };
    let mut cfg = Config::default();
    let entries = [
        ("mode", json_string(mode)),
        ("scouting/multicast/enabled", "false".into()),
        ("listen/endpoints", list(listen)),
        ("connect/endpoints", list(connect)),
        // A peer whose pong is not up yet retries quickly (zenoh's default starts at 1 s).
        (
            "connect/retry",
            "{ period_init_ms: 100, period_max_ms: 1000, period_increase_factor: 2 }".into(),
        ),
    ];
    let mut entries = Vec::from(entries);
    if let Some(t) = tls {
        entries.extend(tls_entries(t));
    }
    for (key, value) in entries {
        cfg.insert_json5(key, &value)
            .map_err(|e| middleware_error(format!("config {key}={value}"), e))?;
    }
    Ok(cfg)
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Qos;

    #[test]
    fn qos_mapping() {
        let s = Settings::from_spec(&Spec::new("x")).unwrap();
        assert_eq!(
            (s.mode, s.express, s.congestion, s.depth),
            (Mode::Peer, true, CongestionControl::Block, Some(10))
        );
        let qos = Qos {
            reliability: Reliability::BestEffort,
            history: History::KeepLast(1),
            ..Qos::default()
        };
        let s = Settings::from_spec(
            &Spec::new("x")
                .with_qos(qos)
                .with_option("mode", "client")
                .with_option("express", "false"),
        )
        .unwrap();
        assert_eq!(
            (s.mode, s.express, s.congestion, s.depth),
            (Mode::Client, false, CongestionControl::Drop, Some(1))
        );
        let keep_all = Qos {
            history: History::KeepAll,
            ..Qos::default()
        };
        assert_eq!(
            Settings::from_spec(&Spec::new("x").with_qos(keep_all))
                .unwrap()
                .depth,
            None
        );
        let tl = Qos {
            durability: Durability::TransientLocal,
            ..Qos::default()
        };
        assert!(Settings::from_spec(&Spec::new("x").with_qos(tl))
            .unwrap_err()
            .is_usage());
    }

    #[test]
    fn options_are_checked() {
        let e = Settings::from_spec(&Spec::new("x").with_option("colour", "red"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--opt colour") && e.contains("mode, express"),
            "{e}"
        );
        let e = Settings::from_spec(&Spec::new("x").with_option("mode", "router"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("allowed: peer, client"), "{e}");
        assert!(
            Settings::from_spec(&Spec::new("x").with_option("express", "maybe"))
                .unwrap_err()
                .is_usage()
        );
    }

    #[test]
    fn config_is_pinned() {
        let cfg = session_config("peer", Some("tcp/127.0.0.1:7447"), None, None).unwrap();
        assert_eq!(cfg.get_json("scouting/multicast/enabled").unwrap(), "false");
        assert!(cfg
            .get_json("listen/endpoints")
            .unwrap()
            .contains("tcp/127.0.0.1:7447"));
        assert_eq!(json_string("a\"b"), "\"a\\\"b\"");
        // a plain session sets no TLS key (zenoh's defaults stand: nothing configured)
        assert_eq!(
            cfg.get_json("transport/link/tls/root_ca_certificate")
                .unwrap(),
            "null"
        );
    }

    #[test]
    fn tls_files_become_zenohs_link_keys() {
        let files =
            TlsFiles::parse("zenoh", "ca=/s/ca.pem,cert=/s/p.pem,key=/s/p.key,mtls=on").unwrap();
        let cfg = session_config("peer", Some("tls/127.0.0.1:7447"), None, Some(&files)).unwrap();
        let key = |k: &str| cfg.get_json(&format!("transport/link/tls/{k}")).unwrap();
        assert_eq!(key("enable_mtls"), "true");
        assert_eq!(key("verify_name_on_connect"), "true");
        assert!(key("root_ca_certificate").contains("/s/ca.pem"));
        assert!(key("listen_private_key").contains("/s/p.key"));
        assert!(key("connect_certificate").contains("/s/p.pem"));
    }

    #[test]
    fn a_link_and_its_files_agree() {
        let at = |e: &str| Address::parse(e).unwrap();
        let ca = TlsFiles::parse("zenoh", "ca=/s/ca.pem").unwrap();
        let own = TlsFiles::parse("zenoh", "ca=/s/ca.pem,cert=/s/p.pem,key=/s/p.key").unwrap();
        let mtls_bare = TlsFiles::parse("zenoh", "ca=/s/ca.pem,mtls=on").unwrap();
        assert!(check_link(&at("tcp/127.0.0.1:1"), None, true, None).is_ok());
        assert!(check_link(&at("tls/127.0.0.1:1"), Some(&ca), false, None).is_ok());
        assert!(check_link(&at("tls/127.0.0.1:1"), Some(&own), true, Some("tls")).is_ok());
        assert!(check_link(&at("quic/127.0.0.1:1"), Some(&own), true, Some("quic")).is_ok());
        for (endpoint, tls, listens, link, says) in [
            ("tls/127.0.0.1:1", None, false, None, "needs --opt tls"),
            (
                "quic/127.0.0.1:1",
                None,
                false,
                None,
                "a quic/ endpoint needs --opt tls",
            ),
            (
                "tls/127.0.0.1:1",
                Some(&ca),
                true,
                None,
                "presents a certificate",
            ),
            (
                "quic/127.0.0.1:1",
                Some(&ca),
                true,
                None,
                "presents a certificate",
            ),
            (
                "tls/127.0.0.1:1",
                Some(&mtls_bare),
                false,
                None,
                "give cert=PATH",
            ),
            (
                "tcp/127.0.0.1:1",
                Some(&ca),
                false,
                None,
                "with a tcp/ endpoint",
            ),
            (
                "tls/127.0.0.1:1",
                Some(&ca),
                false,
                Some("quic"),
                "--opt link=quic with a tls/",
            ),
        ] {
            let e = check_link(&at(endpoint), tls, listens, link).unwrap_err();
            assert!(
                e.is_usage() && e.to_string().contains(says),
                "{endpoint}: {e}"
            );
        }
    }
}
