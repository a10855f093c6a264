//! Fast DDS: no daemon (shared memory on, its default); as cyclonedds (`dds_fixture`), in
//! domains of its own so the two transports' tests do not discover each other.

use mwperf_transports::Kind;

use super::Fixture;

pub fn fixture() -> Fixture {
    super::cyclonedds::dds_fixture(Kind::FastDds, 100)
}
