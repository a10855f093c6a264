//! `--opt security=ca=PATH,cert=PATH,key=PATH,governance=PATH,permissions=PATH`: the participant
//! joins with DDS-Security's builtin plugins (PKI-DH authentication, Access-Permissions, AES-GCM-GMAC
//! cryptography) and this identity's files, as Fast DDS takes them: participant properties
//! `dds.sec.*`, each file a `file://` URI of an absolute path (Fast DDS refuses `file:/path`).
//! The identity CA signs the permissions too (mwperf makes one CA per run: python/mwperf/security/).

use super::T;
use crate::dds_security::SecurityFiles;
use crate::TransportError;

pub use crate::dds_security::OPT;

/// The participant properties ("name=value" lines) for `--opt security=VALUE`.
pub fn properties(value: &str) -> Result<String, TransportError> {
    let files = SecurityFiles::parse(T, value)?;
    let uri = |p: &std::path::Path| format!("file://{}", p.display());
    let (ca, cert, key) = (uri(&files.ca), uri(&files.cert), uri(&files.key));
    let (governance, permissions) = (uri(&files.governance), uri(&files.permissions));
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
}
