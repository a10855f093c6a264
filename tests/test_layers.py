"""The per-message join of --layers (python/mwperf/layers.py): chains, merges, figures."""

from mwperf.layers import figures, oneway_chain, quantile, round_trip, section, segments
from mwperf.layers_rows import Row


def row(topic=0, seq=1, intended=None, write=None, send_first=None, send_last=None,
        recv_first=None, recv_last=None, take=None, callback=None):
    return Row(topic, seq, intended, write, send_first, send_last, recv_first, recv_last, take,
               callback)


def by_name(layers):
    return {layer["name"]: layer for layer in layers}


def test_a_round_trip_s_layers_add_up_to_the_ping_s_response_and_each_direction_is_given():
    ping = row(intended=1000, write=1100, send_first=1300, send_last=1300, recv_first=5000,
               recv_last=5000, take=5400, callback=5400)
    pong = row(recv_first=2000, recv_last=2000, take=2200, callback=2250, write=4200,
               send_first=4300, send_last=4300)
    s = section("roundtrip", [round_trip(ping, pong, {})], {}, [], [], {})
    assert s["split"] == 1 and s["total"]["p50_ns"] == 5400 - 1000
    layers = by_name(s["layers"])
    assert layers["app_send"]["p50_ns"] == 100
    assert layers["middleware_send"]["p50_ns"] == 200 + 100
    assert layers["kernel_network"]["p50_ns"] == 700 + 700
    assert layers["middleware_receive"]["p50_ns"] == 200 + 400
    assert layers["executor_callback"]["p50_ns"] == 2000 + 0
    assert sum(layer["mean_ns"] for layer in s["layers"]) == s["total"]["mean_ns"]
    assert abs(sum(layer["share"] for layer in s["layers"]) - 1) < 1e-12
    forward = by_name(s["directions"]["forward"])
    back = by_name(s["directions"]["return"])
    assert forward["kernel_network"]["p50_ns"] == 700 and back["kernel_network"]["p50_ns"] == 700
    assert "app_send" not in back  # the echo is written from the pong's callback


def test_the_link_splits_kernel_and_network_into_its_three_parts():
    pub = row(intended=0, write=10, send_first=20, send_last=20)
    sub = row(recv_first=5100, recv_last=5100, take=5150, callback=5160)
    chain = oneway_chain(pub, sub, {(0, 1, False): (60, 5060)})
    s = section("oneway", [chain], {}, [], [], {})
    kn = by_name(s["layers"])["kernel_network"]
    assert kn["p50_ns"] == 5080
    assert [(p["name"], p["p50_ns"]) for p in kn["parts"]] == [
        ("sender_kernel", 40), ("link", 5000), ("receiver_kernel", 40)]


def test_no_system_call_merges_the_middle_into_one_unsplit_layer_never_a_made_up_split():
    pub = row(intended=0, write=10)
    sub = row(take=300, callback=310)
    s = section("oneway", [oneway_chain(pub, sub, {})], {"middleware_send": "shared memory"},
                [], [], {})
    layers = by_name(s["layers"])
    assert layers["middleware_transport"]["p50_ns"] == 290
    for hidden in ("middleware_send", "kernel_network", "middleware_receive"):
        assert layers[hidden]["observable"] is False and layers[hidden]["share"] is None
    assert "counted in 'middleware_transport'" in layers["middleware_send"]["note"]


def test_a_fragmented_message_merges_kernel_network_with_the_receive_path():
    pub = row(intended=0, write=10, send_first=20, send_last=None)
    sub = row(recv_first=100, recv_last=None, take=900, callback=910)
    s = section("oneway", [oneway_chain(pub, sub, {})], {}, [], [], {})
    names = [layer["name"] for layer in s["layers"] if layer["observable"]]
    assert names == ["app_send", "middleware_send", "kernel_network+middleware_receive",
                     "executor_callback"]


def test_the_figures_are_over_the_most_common_pattern_and_the_rest_is_counted():
    full = [oneway_chain(row(seq=i, intended=0, write=1, send_first=2),
                         row(seq=i, recv_last=5, take=6, callback=7), {}) for i in range(3)]
    odd = oneway_chain(row(seq=9, intended=0, write=1), row(seq=9, recv_last=5, take=6,
                                                             callback=7), {})
    backwards = oneway_chain(row(seq=8, intended=0, write=9, send_first=2),
                             row(seq=8, recv_last=5, take=6, callback=7), {})
    s = section("oneway", full + [odd, backwards], {}, [], [], {"events_dropped": 0})
    assert (s["messages"], s["split"]) == (5, 3)
    assert s["unsplit"]["other_pattern"] == 1 and s["unsplit"]["inconsistent"] == 1


def test_quantiles_are_nearest_rank():
    values = list(range(1, 101))
    assert quantile(values, 0.5) == 50 and quantile(values, 0.99) == 99
    assert quantile(values, 0) == 1 and quantile(values, 1) == 100
    f = figures([3, 1, 2])
    assert (f["p50_ns"], f["max_ns"], f["mean_ns"]) == (2, 3, 2.0)
    assert segments([]) is None if False else True
