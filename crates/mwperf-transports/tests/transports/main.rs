//! The transports' integration tests, one test binary with a module per area (each binary links
//! every middleware: nine of them took minutes to link on a cold cache). `make test` runs the
//! conformance suites (`conformance::`, `service_conformance::`) once, with the `--layers`
//! interposer preloaded (scripts/conformance-preloaded.sh), and the rest plainly.

mod support;

mod conformance;
mod dds_interop;
mod dds_service_interop;
mod fastdds_shm;
mod mqtt_services;
mod ros1_relay;
mod ros1_services;
mod service_conformance;
mod zenoh_client;
