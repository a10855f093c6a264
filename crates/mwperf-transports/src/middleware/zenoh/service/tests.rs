//! mwperf's zenoh client against a queryable that is not mwperf's server: a separate zenoh
//! session (in a thread of this test) declares a plain queryable with the zenoh API, as another
//! zenoh program on the same key would, and answers with replies and error replies.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zenoh::Wait;

use super::super::{address, settings};
use crate::service::Client;
use crate::Spec;

const MS: u64 = 1_000_000;

fn reply_within(c: &mut dyn Client, buf: &mut Vec<u8>) -> Option<crate::service::Reply> {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if let Some(r) = c.recv_reply(buf, 20 * MS).unwrap() {
            return Some(r);
        }
    }
    None
}

#[test]
fn a_foreign_queryable_answers_mwperfs_client() {
    let port = address::free_tcp_port("127.0.0.1").unwrap();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let cfg = settings::session_config("peer", Some(&endpoint), None, None).unwrap();
    let foreign = zenoh::open(cfg).wait().unwrap();
    let queryable = foreign
        .declare_queryable("mwperf/foreign/service")
        .complete(true)
        .wait()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let answerer = std::thread::spawn(move || {
        while !flag.load(Ordering::Acquire) {
            let Ok(Some(query)) = queryable.recv_timeout(Duration::from_millis(20)) else {
                continue;
            };
            let request = query
                .payload()
                .map(|p| p.to_bytes().into_owned())
                .unwrap_or_default();
            if request.starts_with(b"fail") {
                query.reply_err(b"refused".to_vec()).wait().unwrap();
            } else {
                let mut answer = b"re:".to_vec();
                answer.extend_from_slice(&request);
                query
                    .reply(query.key_expr().clone(), answer)
                    .wait()
                    .unwrap();
            }
        }
    });

    let mut c = super::client(&Spec::new(format!("{endpoint}#foreign"))).unwrap();
    c.wait_matched(10_000 * MS).unwrap();
    let mut buf = Vec::new();
    // the first get may race the route's setup: retry until one is answered
    let end = Instant::now() + Duration::from_secs(10);
    let first = loop {
        let id = c.call(b"hello").unwrap();
        if let Some(r) = reply_within(c.as_mut(), &mut buf) {
            break (id, r);
        }
        assert!(Instant::now() < end, "the foreign queryable never answered");
    };
    assert_eq!((first.1.call, first.1.ok), (first.0, true));
    assert_eq!(buf, b"re:hello");

    let id = c.call(b"fail please").unwrap();
    let r = reply_within(c.as_mut(), &mut buf).expect("an error reply");
    assert_eq!(
        (r.call, r.ok),
        (id, false),
        "a zenoh ReplyError is ok=false"
    );
    assert_eq!(buf, b"refused");

    stop.store(true, Ordering::Release);
    answerer.join().unwrap();
    drop(c);
    foreign.close().wait().unwrap();
}
