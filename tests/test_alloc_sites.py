"""--alloc-sites: reading heaptrack's interpreted record into call sites (allocsites/sites.py).

The record below is written by hand in heaptrack_interpret's format: three messages, each
with one marker allocation, two allocations by ``encode`` through Rust's allocator frames and
one by an unnamed frame inside a C library called from ``dds_write``; setup allocates twice
by ``open`` before the first marker and once after the last.
"""

from mwperf.allocsites.sites import MARKER_BYTES, analyse, parse, readable, table

STRINGS = ["agent", "libddsc.so.0", "mwperf_alloc_sites_marker",
           "alloc::raw_vec::RawVec$LT$T$GT$::grow_one::h0123456789abcdef", "encode", "dds_write",
           "open", "main"]
RECORD = (["v 10400 3", "X /x/mwperf-agent ping --alloc-site-markers"]
          + [f"s {len(text):x} {text}" for text in STRINGS] + """i 1000 1 8
i 1100 1 3
i 1200 1 5
i 1300 1 4
i 1400 1
i 2000 2
i 2100 2 6
i 1500 1 7
t 1 0
t 2 1
t 3 1
t 4 3
t 5 4
t 7 1
t 6 6
t 8 1
a {marker:x} 2
a 40 5
a 80 7
a 10 8
+ 3
+ 3
+ 0
+ 1
+ 1
+ 2
- 1
- 1
+ 0
+ 1
+ 1
+ 2
+ 0
+ 3""".replace("{marker:x}", f"{MARKER_BYTES:x}").splitlines())
"""ips: 1 main, 2 the marker, 3 encode, 4 RawVec::grow_one, 5 unnamed (the agent's allocator),
6 unnamed in libddsc, 7 dds_write, 8 open; kinds: 0 marker, 1 encode (through grow_one and the
unnamed allocator frame), 2 libddsc's unnamed frame under dds_write, 3 open"""


def test_the_steady_state_is_cut_at_the_markers_and_the_markers_are_left_out() -> None:
    result = analyse(parse(RECORD))
    assert result["steady_messages"] == 2
    # between the first marker and the last, per message: 2 x encode, 1 x libddsc
    assert result["steady_allocs"] == 6
    assert result["allocs_per_msg"] == 3.0
    assert result["total_allocs"] == 2 + 4 + 2 + 1  # open x3, encode x4, libddsc x2
    by_function = {s["function"]: s for s in result["sites"]}
    assert set(by_function) == {"encode", "dds_write (+1 unnamed in libddsc.so.0)", "open"}
    encode = by_function["encode"]
    assert (encode["steady_count"], encode["per_msg"], encode["total_count"]) == (4, 2.0, 4)
    assert encode["steady_bytes"] == 4 * 0x40 and encode["callers"] == ["main"]
    lib = by_function["dds_write (+1 unnamed in libddsc.so.0)"]
    assert (lib["steady_count"], lib["total_count"], lib["module"]) == (2, 2, "libddsc.so.0")
    assert by_function["open"]["steady_count"] == 0 and by_function["open"]["per_msg"] == 0.0
    assert [s["function"] for s in result["sites"]][0] == "encode"  # ranked by steady count


def test_without_markers_there_is_no_steady_state_but_the_totals_stand() -> None:
    lines = [line for line in RECORD if line not in ("+ 0",)]
    result = analyse(parse(lines))
    assert result["steady_messages"] == 0 and result["allocs_per_msg"] is None
    assert result["total_allocs"] == 9
    assert all(s["per_msg"] is None for s in result["sites"])


def test_a_marker_needs_its_size_and_its_function() -> None:
    wrong_size = [line.replace(f"a {MARKER_BYTES:x} 2", "a 40 2") for line in RECORD]
    result = analyse(parse(wrong_size))
    assert result["steady_messages"] == 0 and result["total_allocs"] == 12


def test_rust_names_read_as_source() -> None:
    assert readable("alloc::raw_vec::RawVec$LT$T$C$A$GT$::grow_one::h5bc1bcf543b46d6e") == \
        "alloc::raw_vec::RawVec<T,A>::grow_one"
    assert readable("_$LT$mwperf_agent..cli..Common$u20$as$u20$clap..Args$GT$::augment::h0123456789abcdef") == \
        "<mwperf_agent::cli::Common as clap::Args>::augment"
    assert readable("<alloc[fdfd2bd8633a6659]::raw_vec::RawVecInner>::finish_grow") == \
        "<alloc::raw_vec::RawVecInner>::finish_grow"


def test_the_table_names_each_site_with_its_callers() -> None:
    text = table("ping", analyse(parse(RECORD)))
    assert "steady state = 2 messages, 6 allocations" in text
    assert "     2.00        4        4        256  encode [agent] <- main" in text


def test_a_record_cut_short_or_garbled_is_read_as_far_as_it_goes() -> None:
    garbled = RECORD[:34] + ["+ zz", "a", "t 1", "i", "s", "+ 99", "- 1", "+"]
    result = analyse(parse(garbled))
    assert result["total_allocs"] == 3  # open, open, encode (the marker left out; + 99: unknown)
    assert result["steady_messages"] == 0
