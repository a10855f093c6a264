//! ROS 1 request/response (see crate::service): TCPROS service calls, as rospy and roscpp make
//! them, so foreign ROS nodes can be either side.
//!
//! - The service `/mwperf/<base>` (the address as for topics, `http://<master>:<port>/#<base>`)
//!   of type `mwperf_msgs/Bytes`: request `uint8[] data`, response `uint8[] data`; the bytes the
//!   API carries are `data`.
//! - Server ([`super::service_server`]): a TCP listener registered at the master with
//!   `registerService` (unregistered on drop), a node's slave API as its caller API.
//! - Client ([`super::service_client`]): `lookupService`, then the connection header exchange and
//!   calls; `--opt persistent=true|false` (default false, as rospy's `ServiceProxy`).
//! - Wire (after the headers): a request is `u32 length | body`, a response `u8 ok | u32 length
//!   | body` (ok 0: the body is an error message); a `uint8[]` body is `u32 count | bytes`.

use crate::{Spec, TransportError};

use super::service_client::Ros1Client;
use super::service_server::Ros1Server;
use crate::service::{Client, Server};

pub const SRV_TYPE: &str = "mwperf_msgs/Bytes";
pub const REQUEST_TYPE: &str = "mwperf_msgs/BytesRequest";
pub const RESPONSE_TYPE: &str = "mwperf_msgs/BytesResponse";
/// md5 of the srv as genmsg computes it (`genmsg.gentools.compute_md5` on the spec loaded by
/// `genmsg.msg_loader.load_srv_from_string`, python3-genmsg 0.6.0): md5 of the request's md5
/// text followed by the response's, i.e. md5("uint8[] datauint8[] data"). Rechecked by the test
/// below, and against python3-genmsg when it is installed.
pub const SRV_MD5: &str = "07ca5999d9d671038b26b777e731c7f0";

/// The service a base names.
pub fn service_name(base: &str) -> String {
    format!("/mwperf/{base}")
}

/// `rosrpc://host:port` → (host, port).
pub fn split_rosrpc(uri: &str) -> Option<(&str, u16)> {
    let rest = uri.strip_prefix("rosrpc://")?.trim_end_matches('/');
    let (host, port) = rest.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    (!host.is_empty()).then_some(())?;
    Some((host, port.parse().ok()?))
}

/// What goes before a request's `data`: frame length, then the array's count.
pub fn request_head(n: usize) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(&((n + 4) as u32).to_le_bytes());
    h[4..].copy_from_slice(&(n as u32).to_le_bytes());
    h
}

/// What goes before a successful response's `data`: ok 1, frame length, the array's count.
pub fn response_head(n: usize) -> [u8; 9] {
    let mut h = [0u8; 9];
    h[0] = 1;
    h[1..5].copy_from_slice(&((n + 4) as u32).to_le_bytes());
    h[5..].copy_from_slice(&(n as u32).to_le_bytes());
    h
}

/// What goes before a failure's message: ok 0, the message's length.
pub fn failure_head(n: usize) -> [u8; 5] {
    let mut h = [0u8; 5];
    h[1..].copy_from_slice(&(n as u32).to_le_bytes());
    h
}

/// The `data` of a serialized `uint8[] data` message, or None when `body` is not exactly one.
pub fn bytes_body(body: &[u8]) -> Option<&[u8]> {
    let n = u32::from_le_bytes(body.get(..4)?.try_into().ok()?) as usize;
    (body.len() == 4usize.checked_add(n)?).then(|| &body[4..])
}

/// `--opt persistent`: whether the client keeps one connection for all calls.
pub fn persistent(spec: &Spec) -> Result<bool, TransportError> {
    let options = spec.options_of(&super::super::ros1_descriptor::DESCRIPTOR)?;
    match options.get("persistent") {
        None => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some("false") | Some("0") => Ok(false),
        Some(v) => Err(TransportError::Unsupported {
            transport: "ros1",
            what: format!("'--opt persistent={v}' (allowed: true, false)"),
        }),
    }
}

pub fn client(spec: &Spec) -> Result<Box<dyn Client>, TransportError> {
    Ok(Box::new(Ros1Client::open(spec)?))
}

pub fn server(spec: &Spec) -> Result<Box<dyn Server>, TransportError> {
    Ok(Box::new(Ros1Server::open(spec)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The srv file.
    const SRV_DEFINITION: &str = "uint8[] data\n---\nuint8[] data\n";

    #[test]
    fn md5_follows_the_genmsg_rule() {
        // genmsg: a srv's md5 is that of its request's md5 text + its response's; the md5 text of
        // "uint8[] data" is the line itself.
        let (req, resp) = SRV_DEFINITION.split_once("---\n").unwrap();
        let text = format!("{}{}", req.trim_end(), resp.trim_end());
        assert_eq!(text, "uint8[] datauint8[] data");
        let out = std::process::Command::new("md5sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(text.as_bytes())?;
                c.wait_with_output()
            });
        if let Ok(out) = out {
            assert!(String::from_utf8_lossy(&out.stdout).starts_with(SRV_MD5));
        }
        // genmsg itself, where installed (Debian python3-genmsg)
        let script = "import sys, genmsg, genmsg.msg_loader as ml, genmsg.gentools as gt\n\
                      c = genmsg.MsgContext.create_default()\n\
                      s = ml.load_srv_from_string(c, sys.argv[1], 'mwperf_msgs/Bytes')\n\
                      ml.load_depends(c, s, {})\n\
                      print(gt.compute_md5(c, s))\n";
        if let Ok(out) = std::process::Command::new("/usr/bin/python3")
            .args(["-c", script, SRV_DEFINITION])
            .output()
        {
            let text = String::from_utf8_lossy(&out.stdout);
            if !String::from_utf8_lossy(&out.stderr).contains("No module named") {
                assert_eq!(text.trim(), SRV_MD5, "{out:?}");
            }
        }
    }

    #[test]
    fn framing() {
        assert_eq!(request_head(3), [7, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(response_head(3), [1, 7, 0, 0, 0, 3, 0, 0, 0]);
        assert_eq!(failure_head(2), [0, 2, 0, 0, 0]);
        assert_eq!(bytes_body(&[2, 0, 0, 0, 9, 8]), Some(&[9u8, 8][..]));
        for bad in [
            &[][..],
            &[2, 0, 0],
            &[2, 0, 0, 0, 9],
            &[1, 0, 0, 0, 9, 8],
            &[255, 255, 255, 255],
        ] {
            assert_eq!(bytes_body(bad), None, "{bad:?}");
        }
        assert_eq!(
            split_rosrpc("rosrpc://127.0.0.1:4000"),
            Some(("127.0.0.1", 4000))
        );
        assert_eq!(split_rosrpc("rosrpc://[::1]:4000/"), Some(("::1", 4000)));
        for bad in ["http://h:1", "rosrpc://h", "rosrpc://:1", "rosrpc://h:x"] {
            assert_eq!(split_rosrpc(bad), None, "{bad}");
        }
    }

    #[test]
    fn persistent_option() {
        assert!(!persistent(&Spec::new("x")).unwrap());
        assert!(persistent(&Spec::new("x").with_option("persistent", "true")).unwrap());
        let e = persistent(&Spec::new("x").with_option("persistent", "yes")).unwrap_err();
        assert!(
            e.is_usage() && e.to_string().contains("allowed: true, false"),
            "{e}"
        );
    }
}
