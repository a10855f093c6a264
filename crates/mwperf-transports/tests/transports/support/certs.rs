//! Certificates for the TLS fixtures (mqtt's mTLS broker, foxglove's wss server), made by
//! OpenSSL: an implementation other than the rustls that checks them.

/// A CA, the broker's certificate (naming 127.0.0.1) and a client's, signed by it (P-256).
pub fn make_certificates(dir: &std::path::Path) {
    let openssl = |args: &[&str]| {
        let done = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (apt-get install openssl)");
        assert!(
            done.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&done.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"],
            &ec[..],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=mwperf test CA",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        ]
        .concat(),
    );
    for (name, usage) in [("broker", "serverAuth"), ("client", "clientAuth")] {
        let ext = format!("{name}.ext");
        std::fs::write(
            dir.join(&ext),
            format!("basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage={usage}\n"),
        )
        .expect("write the extensions");
        let (key, csr, pem) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
        );
        let subject = format!("/CN=mwperf test {name}");
        openssl(
            &[
                &["req"],
                &ec[..],
                &["-keyout", &key, "-out", &csr, "-subj", &subject],
            ]
            .concat(),
        );
        openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            &pem,
            "-extfile",
            &ext,
        ]);
    }
}
