"""Test helper run under /usr/bin/python3 (rospy): publish on a live ROS 1 master at known rates.

Arguments: MASTER_URI RUN_S. /stamped: geometry_msgs/PointStamped at 100 Hz, header.stamp = the
publish time; /paused: std_msgs/String at 50 Hz that stops for 500 ms once, 1.5 s after the start.
They start once a subscriber is connected to each (the probe), then run on absolute deadlines (start + k * period), so their rates are exact up to the OS's wake-up.
"""

import os
import sys
import time

os.environ["ROS_MASTER_URI"] = sys.argv[1]
import rospy  # noqa: E402
from geometry_msgs.msg import PointStamped  # noqa: E402
from std_msgs.msg import String  # noqa: E402

run_s = float(sys.argv[2])
rospy.init_node("mwperf_test_publishers", disable_signals=True, disable_rosout=True)
stamped = rospy.Publisher("/stamped", PointStamped, queue_size=100)
paused = rospy.Publisher("/paused", String, queue_size=100)
deadline = time.monotonic() + 20
while (stamped.get_num_connections() == 0 or paused.get_num_connections() == 0) \
        and time.monotonic() < deadline:
    time.sleep(0.01)  # start the schedule once the probe is connected to both topics
time.sleep(0.2)
start = time.monotonic()
events = sorted([(k / 100, "s") for k in range(int(run_s * 100))] +
                [(k / 50, "p") for k in range(int(run_s * 50)) if not 1.5 <= k / 50 < 2.0])
for offset, which in events:
    delay = start + offset - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    if which == "s":
        msg = PointStamped()
        msg.header.stamp = rospy.Time.from_sec(time.time())
        stamped.publish(msg)
    else:
        paused.publish(String(data="x" * 100))
rospy.signal_shutdown("done")
