"""--layers on --transport ros2 (python/mwperf/layers.py): ROS 2's own moments (its
tracepoints, interposed by libmwperf_layers.so) cut the middleware layers into parts that add
up to the layer exactly; a moment missing or out of order gives no parts, never a made-up
split."""

from mwperf.layers import oneway_chain, round_trip, section, split_chain
from mwperf.layers_rows import Row


def row(**stamps: int) -> Row:
    fields = ("intended", "write", "send_first", "send_last", "recv_first", "recv_last", "take",
              "callback", "rcl_publish", "rmw_publish", "rmw_take", "rcl_take")
    return Row(0, 1, *(stamps.get(f) for f in fields))


def by_name(layers):
    return {layer["name"]: layer for layer in layers}


def parts_of(layer):
    return [(p["name"], p["p50_ns"]) for p in layer["parts"] or []]


def test_shared_memory_s_unsplit_middle_is_cut_at_rcl_and_rmw_in_path_order():
    pub = row(intended=0, write=10, rcl_publish=15, rmw_publish=22)
    sub = row(rmw_take=400, rcl_take=403, take=410, callback=411)
    s = section("oneway", [oneway_chain(pub, sub, {})], {}, [], [], {})
    middle = by_name(s["layers"])["middleware_transport"]
    assert middle["p50_ns"] == 400
    assert parts_of(middle) == [("ros2_client_send", 5), ("ros2_rcl_send", 7), ("ros2_dds", 378),
                                ("ros2_rmw_receive", 3), ("ros2_client_receive", 7)]
    assert sum(p for _, p in parts_of(middle)) == middle["p50_ns"]
    assert by_name(s["layers"])["app_send"]["parts"] is None


def test_over_udp_the_send_and_receive_paths_are_cut_and_kernel_network_is_untouched():
    pub = row(intended=0, write=10, rcl_publish=12, rmw_publish=15, send_first=40, send_last=40)
    sub = row(recv_first=90, recv_last=90, rmw_take=150, rcl_take=151, take=160, callback=161)
    s = section("oneway", [oneway_chain(pub, sub, {})], {}, [], [], {})
    layers = by_name(s["layers"])
    assert parts_of(layers["middleware_send"]) == [
        ("ros2_client_send", 2), ("ros2_rcl_send", 3), ("ros2_dds_send", 25)]
    assert parts_of(layers["middleware_receive"]) == [
        ("ros2_dds_receive", 60), ("ros2_rmw_receive", 1), ("ros2_client_receive", 9)]
    assert layers["kernel_network"]["p50_ns"] == 50 and layers["kernel_network"]["parts"] is None


def test_a_round_trip_sums_each_part_over_both_directions_and_keeps_each_direction():
    ping = row(intended=0, write=10, rcl_publish=11, rmw_publish=13, rmw_take=900, rcl_take=902,
               take=905, callback=905)
    pong = row(rmw_take=300, rcl_take=301, take=303, callback=304, write=310, rcl_publish=312,
               rmw_publish=316)
    s = section("roundtrip", [round_trip(ping, pong, {})], {}, [], [], {})
    assert parts_of(by_name(s["layers"])["middleware_transport"]) == [
        ("ros2_client_send", 1 + 2), ("ros2_rcl_send", 2 + 4), ("ros2_dds", 287 + 584),
        ("ros2_rmw_receive", 1 + 2), ("ros2_client_receive", 2 + 3)]
    back = by_name(s["directions"]["return"])["middleware_transport"]
    assert parts_of(back) == [("ros2_client_send", 2), ("ros2_rcl_send", 4), ("ros2_dds", 584),
                              ("ros2_rmw_receive", 2), ("ros2_client_receive", 3)]


def test_a_moment_out_of_order_or_missing_gives_no_parts_and_the_layers_stay_as_they_were():
    backwards = row(intended=0, write=10, rcl_publish=30, rmw_publish=20)
    sub = row(rmw_take=400, rcl_take=403, take=410, callback=411)
    split = split_chain(oneway_chain(backwards, sub, {}))
    assert split is not None and split[2] == []  # the layers are split, not the parts
    ok = oneway_chain(row(intended=0, write=10, rcl_publish=15, rmw_publish=22), sub, {})
    missing = oneway_chain(row(intended=0, write=10, rcl_publish=15), sub, {})
    s = section("oneway", [ok, missing], {}, [], [], {})
    middle = by_name(s["layers"])["middleware_transport"]
    assert s["split"] == 2 and middle["parts"] is None  # not every message has them all


def test_without_ros2_moments_nothing_changes():
    pub = row(intended=0, write=10, send_first=20, send_last=20)
    sub = row(recv_first=50, recv_last=50, take=60, callback=61)
    s = section("oneway", [oneway_chain(pub, sub, {})], {}, [], [], {})
    assert all(layer["parts"] is None for layer in s["layers"])
