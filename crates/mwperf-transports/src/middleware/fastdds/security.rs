//! `--opt security=ca=PATH,cert=PATH,key=PATH,governance=PATH,permissions=PATH`: the participant
//! joins with DDS-Security's builtin plugins (PKI-DH authentication, Access-Permissions, AES-GCM-GMAC
//! cryptography) and this identity's files, as Fast DDS takes them: participant properties
//! `dds.sec.*`, each file a `file://` URI of an absolute path (Fast DDS refuses `file:/path`).
//! The identity CA signs the permissions too (mwperf makes one CA per run: python/mwperf/security/).

use super::T;
use crate::TransportError;

pub const OPT: &str = "security";
/// The files the option names, in the order its help gives them.
pub const KEYS: [&str; 5] = ["ca", "cert", "key", "governance", "permissions"];

/// The participant properties ("name=value" lines) for `--opt security=VALUE`.
pub fn properties(value: &str) -> Result<String, TransportError> {
    let refuse = |what: String| TransportError::Unsupported {
        transport: T,
        what: format!("--opt security={value}: {what} (give {})", form()),
    };
    let mut paths: [Option<&str>; 5] = [None; 5];
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
        paths[at] = Some(path);
    }
    let file = |i: usize| -> Result<String, TransportError> {
        paths[i]
            .map(|p| format!("file://{p}"))
            .ok_or_else(|| refuse(format!("{}= is missing", KEYS[i])))
    };
    let (ca, cert, key, governance, permissions) =
        (file(0)?, file(1)?, file(2)?, file(3)?, file(4)?);
    let auth = "dds.sec.auth.builtin.PKI-DH";
    let access = "dds.sec.access.builtin.Access-Permissions";
    Ok([
        "dds.sec.auth.plugin=builtin.PKI-DH".to_string(),
        format!("{auth}.identity_ca={ca}"),
        format!("{auth}.identity_certificate={cert}"),
        format!("{auth}.private_key={key}"),
        "dds.sec.access.plugin=builtin.Access-Permissions".to_string(),
        format!("{access}.permissions_ca={ca}"),
        format!("{access}.governance={governance}"),
        format!("{access}.permissions={permissions}"),
        "dds.sec.crypto.plugin=builtin.AES-GCM-GMAC".to_string(),
    ]
    .join("\n"))
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
    fn every_file_becomes_its_property_as_a_file_uri() {
        let text = properties(
            "ca=/p/ca.pem,cert=/p/a.pem,key=/p/a.key,governance=/p/g.p7s,permissions=/p/a.p7s",
        )
        .unwrap();
        assert!(text.contains("dds.sec.auth.builtin.PKI-DH.identity_ca=file:///p/ca.pem"));
        assert!(text
            .contains("dds.sec.access.builtin.Access-Permissions.permissions_ca=file:///p/ca.pem"));
        assert!(text.contains("dds.sec.auth.builtin.PKI-DH.private_key=file:///p/a.key"));
        assert!(
            text.contains("dds.sec.access.builtin.Access-Permissions.permissions=file:///p/a.p7s")
        );
        assert!(text.contains("dds.sec.crypto.plugin=builtin.AES-GCM-GMAC"));
        assert_eq!(text.lines().count(), 9);
    }

    #[test]
    fn a_missing_or_relative_file_is_named() {
        let missing = properties("ca=/c,cert=/a,key=/k,governance=/g").unwrap_err();
        assert!(
            missing.to_string().contains("permissions= is missing"),
            "{missing}"
        );
        let relative = properties("ca=c.pem").unwrap_err();
        assert!(
            relative
                .to_string()
                .contains("ca=c.pem is not an absolute path"),
            "{relative}"
        );
        let unknown = properties("identity=/x").unwrap_err();
        assert!(
            unknown.to_string().contains("'identity' is not one of"),
            "{unknown}"
        );
    }
}
