"""The layers of a message's latency (``--layers``, docs/layers.md): their stable names and
labels, in the order a message passes them.

One place for them because several readers key on the names — the catalogue's columns
(``layer_<name>_p50_ns``), compare's budgets (``layer.<name>``), the run's table and the
report — and a result carries its own labels, so only a result without them (or a name this
version does not know) falls back to these.
"""

LAYERS: tuple[tuple[str, str], ...] = (
    ("app_send", "sender app \u2192 middleware"),
    ("middleware_send", "middleware send path"),
    ("kernel_network", "kernel and network"),
    ("middleware_receive", "middleware receive path"),
    ("executor_callback", "executor and callback"),
    ("middleware_transport", "middleware and transport, not split"),
)
"""(name, label): the five layers of a split message, then the combined one that stands for
middleware_send + kernel_network + middleware_receive where no system call carries the message
(shared memory)"""
NAMES = tuple(name for name, _ in LAYERS)
PARTS: tuple[tuple[str, str], ...] = (
    ("sender_kernel", "sender kernel"),
    ("link", "link (emulator)"),
    ("receiver_kernel", "receiver kernel"),
)
"""with --link: the parts of kernel_network, in order"""
ROS2_PARTS: tuple[tuple[str, str], ...] = (
    ("ros2_client_send", "client \u2192 rcl_publish"),
    ("ros2_rcl_send", "rcl_publish \u2192 rmw_publish"),
    ("ros2_dds_send", "rmw_publish \u2192 send call (DDS)"),
    ("ros2_dds", "rmw_publish \u2192 rmw_take (DDS)"),
    ("ros2_dds_receive", "receive call \u2192 rmw_take (DDS)"),
    ("ros2_rmw_receive", "rmw_take \u2192 rcl_take"),
    ("ros2_client_receive", "rcl_take \u2192 client's take"),
)
"""on --transport ros2: the parts of the middleware layers between ROS 2's own moments (its
tracepoints), in a message's path order: middleware_send = client_send + rcl_send + dds_send;
middleware_receive = dds_receive + rmw_receive + client_receive; middleware_transport (shared
memory) = client_send + rcl_send + dds + rmw_receive + client_receive"""
UNSPLIT: tuple[tuple[str, str], ...] = (
    ("events_dropped", "events dropped (a full ring)"),
    ("other_pattern", "seen differently from the others (a system call missing for them)"),
    ("inconsistent", "the two sides' moments out of order (rows that do not belong together)"),
)
"""why a measured message was not split (the section's ``unsplit`` counts)"""


def label_of(name: str) -> str:
    """The label of layer or part ``name`` (the name itself when unknown)."""
    return dict(LAYERS + PARTS + ROS2_PARTS).get(name, name)
