//! XML-RPC (ROS 1 master and slave APIs): HTTP messages and the documents in them.
//!
//! Invariants: a parsed call or response, encoded again, parses to the same method and values;
//! unescape(escape(s)) == s; an HTTP message read from the input has a body no longer than it.
use mwperf_transports::fuzzing::ros1::xmlrpc::{self, Value};

fn has_nan(v: &Value) -> bool {
    match v {
        Value::Double(d) => d.is_nan(),
        Value::Array(items) => items.iter().any(has_nan),
        Value::Struct(m) => m.iter().any(|(_, v)| has_nan(v)),
        _ => false,
    }
}

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let text = String::from_utf8_lossy(data);
        if let Ok((name, params)) = xmlrpc::parse_call(&text) {
            if !params.iter().any(has_nan) {
                let again = xmlrpc::parse_call(&xmlrpc::method_call(&name, &params));
                assert_eq!(again, Ok((name.trim().to_string(), params)));
            }
        }
        match xmlrpc::parse_response(&text) {
            Ok(v) if !has_nan(&v) => {
                assert_eq!(
                    xmlrpc::parse_response(&xmlrpc::method_response(&v)),
                    Ok(v.clone())
                );
                let _ = xmlrpc::ros_result(v);
            }
            _ => {}
        }
        if let Ok(plain) = xmlrpc::unescape(&text) {
            let mut escaped = String::new();
            xmlrpc::escape(&plain, &mut escaped);
            assert_eq!(xmlrpc::unescape(&escaped).as_deref(), Ok(plain.as_str()));
        }
        let _ = xmlrpc::split_uri(&text);
        let mut reader = data;
        if let Ok((head, body)) = xmlrpc::read_http(&mut reader) {
            assert!(head.len() + body.len() <= data.len() * 3); // lossy head: U+FFFD is 3 bytes
        }
    });
}
