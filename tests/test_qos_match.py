"""DDS's request-vs-offered QoS rules (probe/qos_match.py): a reader's request against a writer's
offer, one reason per rule broken, none when they match; and the compact QoS text."""

import pytest

from mwperf.probe.qos_match import mismatches, partition_match
from mwperf.probe.qos_text import qos_text


def qos(**changes: object) -> dict:
    base = {"reliability": "reliable", "durability": "volatile", "history": "keep-last",
            "depth": 10, "deadline_ns": None, "liveliness": "automatic", "lease_ns": None,
            "lifespan_ns": None, "ownership": "shared", "partitions": []}
    return base | changes


def test_equal_qos_match() -> None:
    assert mismatches(qos(), qos(), "a::B_", "a::B_") == []


@pytest.mark.parametrize(("writer", "reader", "words"), [
    (qos(reliability="best-effort"), qos(),
     "reliability: the reader asks for reliable, the writer offers best-effort"),
    (qos(), qos(durability="transient-local"),
     "durability: the reader asks for transient-local, the writer offers volatile"),
    (qos(durability="transient-local"), qos(durability="persistent"),
     "durability: the reader asks for persistent, the writer offers transient-local"),
    (qos(deadline_ns=200_000_000), qos(deadline_ns=100_000_000),
     "deadline: the reader asks for 100 ms, the writer offers 200 ms"),
    (qos(), qos(deadline_ns=100_000_000),
     "deadline: the reader asks for 100 ms, the writer offers none (infinite)"),
    (qos(), qos(liveliness="manual-by-topic"),
     "liveliness: the reader asks for manual-by-topic, the writer offers automatic"),
    (qos(lease_ns=2_000_000_000), qos(lease_ns=1_000_000_000),
     "liveliness lease: the reader asks for 1.00 s, the writer offers 2.00 s"),
    (qos(ownership="exclusive"), qos(), "ownership: the reader is shared, the writer exclusive"),
    (qos(partitions=["a"]), qos(), "partitions: the reader is in the default partition, the "
     "writer in 'a': none in common"),
])
def test_each_rule_broken_is_one_reason(writer: dict, reader: dict, words: str) -> None:
    assert mismatches(writer, reader) == [words]


@pytest.mark.parametrize(("writer", "reader"), [
    (qos(), qos(reliability="best-effort")),  # the offer is more than asked: fine
    (qos(durability="transient-local"), qos()),
    (qos(deadline_ns=50_000_000), qos(deadline_ns=100_000_000)),
    (qos(deadline_ns=50_000_000), qos()),
    (qos(liveliness="manual-by-topic"), qos(liveliness="manual-by-participant")),
    (qos(lease_ns=1_000_000_000), qos()),
    (qos(partitions=["a", "b"]), qos(partitions=["b"])),
    (qos(partitions=["robot*"]), qos(partitions=["robot1"])),
    (qos(partitions=[""]), qos(partitions=[])),
])
def test_offers_at_least_what_is_requested_match(writer: dict, reader: dict) -> None:
    assert mismatches(writer, reader) == []


def test_several_reasons_and_types() -> None:
    found = mismatches(qos(reliability="best-effort"), qos(durability="transient-local"),
                       "std_msgs::msg::dds_::String_", "std_msgs::msg::dds_::Int32_")
    assert found == ["reliability: the reader asks for reliable, the writer offers best-effort",
                     "durability: the reader asks for transient-local, the writer offers volatile",
                     "type: the reader expects std_msgs::msg::dds_::Int32_, the writer publishes "
                     "std_msgs::msg::dds_::String_"]


def test_a_field_missing_on_one_side_is_not_judged() -> None:
    assert mismatches({"reliability": "best-effort"}, {"durability": "persistent"}) == []


def test_partition_wildcards() -> None:
    assert partition_match("robot?", "robot1") and partition_match("a", "a")
    assert not partition_match("robot*", "robot*x") and not partition_match("a", "b")


def test_qos_text() -> None:
    assert qos_text(qos()) == "reliable/volatile/keep-last:10"
    assert qos_text(qos(history="keep-all", reliability="best-effort")) == (
        "best-effort/volatile/keep-all")
    assert qos_text(qos(deadline_ns=100_000_000, ownership="exclusive", partitions=["a", "b"])) == (
        "reliable/volatile/keep-last:10, deadline 100 ms, exclusive, partitions a,b")
    assert qos_text({}) == "?"
