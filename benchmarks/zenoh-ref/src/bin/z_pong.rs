//
// Follows zenoh's examples/examples/z_pong.rs at tag 1.10.2
// (Copyright (c) 2023 ZettaScale Technology, EPL-2.0 OR Apache-2.0), rewritten for mwperf's
// benchmark with a hand-parsed CLI. Behaviour kept: subscribes test/ping and re-publishes each
// payload on test/pong from the subscriber callback (no thread hop), CongestionControl::Block,
// express unless --no-express; runs until killed.
//
// SPDX-License-Identifier: EPL-2.0 OR Apache-2.0
//
use zenoh::{key_expr::keyexpr, qos::CongestionControl, Wait};

#[path = "../args.rs"]
mod args;

fn main() {
    let a = args::parse(&[]);
    if !a.positional.is_empty() {
        args::usage("z_pong takes no positional arguments");
    }
    let session = zenoh::open(a.config).wait().unwrap();

    // The key expression to read the data from
    let key_expr_ping = keyexpr::new("test/ping").unwrap();
    // The key expression to echo the data back
    let key_expr_pong = keyexpr::new("test/pong").unwrap();

    let publisher = session.declare_publisher(key_expr_pong).congestion_control(CongestionControl::Block).express(a.express).wait().unwrap();

    session.declare_subscriber(key_expr_ping).callback(move |sample| publisher.put(sample.payload().clone()).wait().unwrap()).background().wait().unwrap();

    std::thread::park();
}
