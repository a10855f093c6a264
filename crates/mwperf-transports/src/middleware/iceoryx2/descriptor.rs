//! What iceoryx2 is (see [`crate::descriptor`]); compiled with or without the `iceoryx2`
//! feature, so a transport compiled out is still listed.

use crate::{Descriptor, Fanout, Framing, Opt, QosSupport};

pub const DESCRIPTOR: Descriptor = Descriptor {
    name: "iceoryx2",
    description: "iceoryx2 zero-copy shared-memory publish/subscribe (one host)",
    address: "<base> (service names mwperf/<base>/ping|pong; 'auto' picks one)",
    daemon: None,
    discovery: true,
    framing: Framing::Middleware,
    max_message: None,
    local_only: true,
    crosses_hosts: false,
    fanout: Fanout::Counted,
    node_session: true,
    defaults: &[],
    opts: &[
        Opt { key: "send-timeout", help: "how long a reliable send waits for a full queue before it fails (a duration; default 1s)" },
        Opt { key: "max-shm", help: "shared memory one publisher may preallocate (bytes, at least 1MiB; default 256MiB)" },
        Opt { key: "loans", help: "on (default): a subscriber reads each message in the publisher's shared memory, zero-copy, and releases it at its next receive; off: copies each out (the copy-vs-zero-copy comparison)" },
        Opt { key: "domain", help: "prefix of every file iceoryx2 creates, so only peers in the same domain meet (1 to 32 letters, digits or '-')" },
    ],
    qos: QosSupport {
        reliability: QosSupport::RELIABILITY,
        history: &["keep-last"],
        durability: QosSupport::DURABILITY,
        note: "keep-all refused (queues are fixed when a service is created); best-effort = a full queue drops its oldest sample; transient-local keeps depth samples for late joiners",
    },
    services: crate::service::Services::Native(
        "iceoryx2 request-response: mwperf/<base>/service, an ActiveRequest answered with one response loaned from the server's segment, a PendingResponse per call",
    ),
};
