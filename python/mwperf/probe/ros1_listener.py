"""Subscribe to a live ROS 1 system's topics as an ordinary subscriber and log each arrival.

Run by ``mwperf probe --ros1`` under the system interpreter (/usr/bin/python3, where Debian installs
rospy); it imports nothing from mwperf. Arguments: MASTER_URI DURATION_S OUTPUT [TOPIC...].

It never publishes: the node is started with rosout disabled (no /rosout publisher), and each topic
is subscribed as rospy.AnyMsg (any type, md5 '*'), so messages are not deserialised. Per message
it writes one line "topic_index arrival_ns size stamp_ns" (stamp_ns = header.stamp when the type
begins with a std_msgs/Header, else -1) to OUTPUT, and first a JSON line with the topics and its
own node name (left out of the topics' subscribers).
Exit 3: the master does not answer; exit 4: a named topic is not published.
"""

import json
import os
import sys
import threading
import time

MASTER_TIMEOUT_S = 3.0


def has_header(definition):
    """Whether the message's first field is a std_msgs/Header (constants are skipped)."""
    for line in definition.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("==="):
            break  # the definitions of nested types follow
        if not line or "=" in line:
            continue
        return line.split()[0] in ("Header", "std_msgs/Header")
    return False


def main(argv):
    master_uri, duration_s, output, wanted = argv[0], float(argv[1]), argv[2], argv[3:]
    os.environ["ROS_MASTER_URI"] = master_uri
    import socket
    import rosgraph
    import rospy

    socket.setdefaulttimeout(MASTER_TIMEOUT_S)
    try:
        published = dict(rosgraph.Master("/mwperf_probe").getPublishedTopics("/"))
    except Exception as exc:
        print(f"the ROS master at {master_uri} does not answer ({exc})", file=sys.stderr)
        return 3
    socket.setdefaulttimeout(None)
    topics = wanted or sorted(t for t in published if t != "/rosout" and t != "/rosout_agg")
    missing = [t for t in topics if t not in published]
    if missing:
        print(f"topic {missing[0]!r} is not published at {master_uri} (published: "
              f"{', '.join(sorted(published)) or 'nothing'})", file=sys.stderr)
        return 4
    rospy.init_node("mwperf_probe", anonymous=True, disable_rosout=True, disable_signals=True,
                    disable_rostime=True)
    lock = threading.Lock()
    out = open(output, "w")
    headers = {}
    state = {"open": False}

    def callback(msg, index):
        arrival = time.time_ns()
        raw = msg._buff
        stamp = -1
        if index not in headers:
            definition = getattr(msg, "_connection_header", {}).get("message_definition", "")
            headers[index] = has_header(definition)
        if headers[index] and len(raw) >= 12:
            secs = int.from_bytes(raw[4:8], "little")
            nsecs = int.from_bytes(raw[8:12], "little")
            stamp = secs * 1_000_000_000 + nsecs
        with lock:
            if state["open"]:
                out.write(f"{index} {arrival} {len(raw)} {stamp}\n")

    subscribers = [rospy.Subscriber(t, rospy.AnyMsg, callback, callback_args=i, queue_size=1000)
                   for i, t in enumerate(topics)]
    with lock:
        start = time.time_ns()
        out.write(json.dumps({"topics": [[t, published[t]] for t in topics],
                              "start_ns": start, "node": rospy.get_name()}) + "\n")
        state["open"] = True
    time.sleep(duration_s)
    with lock:
        state["open"] = False
        out.write(json.dumps({"end_ns": time.time_ns()}) + "\n")
        out.close()
    for s in subscribers:
        s.unregister()
    rospy.signal_shutdown("probe done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
