"""Write an example ROS 1 bag with Debian's rosbag Python API (python3-rosbag, python3-sensor-msgs).

Run by ``mwperf bag example`` under the system interpreter (/usr/bin/python3), which is where
Debian installs rosbag; it imports nothing from mwperf. Arguments: OUTPUT DURATION_S WIDTH HEIGHT
RANGES SEED. Two topics, like seed 000's recording: /scan (sensor_msgs/LaserScan, RANGES float32
ranges, ~4 KB at 1000) at 40 Hz and /camera/image_raw (sensor_msgs/Image, mono8 WIDTHxHEIGHT, 308 KB
at 640x480) at 30 Hz. Each message is recorded at its nominal time plus jitter (seeded, Gaussian:
sigma 1 ms for scans, 2 ms for images, clipped to +-40 % of the period) and its header.stamp is the
capture time, a few ms before the record time, as a driver would stamp it.
"""

import random
import sys

import rosbag
import rospy
from sensor_msgs.msg import Image, LaserScan

START_S = 1_700_000_000.0  # a fixed wall-clock start, so the same arguments give the same bag


def scans(duration_s, ranges, rng):
    period = 1 / 40
    for k in range(int(round(duration_s / period))):
        jitter = max(-0.4 * period, min(0.4 * period, rng.gauss(0, 0.001)))
        msg = LaserScan()
        msg.header.seq = k
        msg.header.frame_id = "laser"
        msg.header.stamp = rospy.Time.from_sec(START_S + k * period)
        msg.angle_min, msg.angle_max = -2.35619, 2.35619
        msg.angle_increment = (msg.angle_max - msg.angle_min) / max(ranges - 1, 1)
        msg.scan_time, msg.range_min, msg.range_max = period, 0.02, 30.0
        msg.ranges = [2.0 + 0.5 * ((i * 7 + k) % 13) / 13 + rng.random() * 0.01 for i in range(ranges)]
        yield START_S + k * period + 0.002 + jitter, "/scan", msg


def images(duration_s, width, height, rng):
    period = 1 / 30
    row = bytes((x * 255 // max(width - 1, 1)) for x in range(width))
    for k in range(int(round(duration_s / period))):
        jitter = max(-0.4 * period, min(0.4 * period, rng.gauss(0, 0.002)))
        msg = Image()
        msg.header.seq = k
        msg.header.frame_id = "camera"
        msg.header.stamp = rospy.Time.from_sec(START_S + k * period)
        msg.height, msg.width, msg.encoding, msg.step = height, width, "mono8", width
        noise = bytes(rng.getrandbits(8) & 0x0F for _ in range(width))
        msg.data = b"".join(bytes(a ^ b for a, b in zip(row, noise)) if y % 8 == 0 else row
                            for y in range(height))
        yield START_S + k * period + 0.005 + jitter, "/camera/image_raw", msg


def main(argv):
    output, duration_s, width, height, ranges, seed = (argv[0], float(argv[1]), int(argv[2]),
                                                       int(argv[3]), int(argv[4]), int(argv[5]))
    rng = random.Random(seed)
    messages = sorted(list(scans(duration_s, ranges, rng)) + list(images(duration_s, width, height, rng)),
                      key=lambda m: m[0])
    with rosbag.Bag(output, "w") as bag:
        for t, topic, msg in messages:
            bag.write(topic, msg, t=rospy.Time.from_sec(t))


if __name__ == "__main__":
    main(sys.argv[1:])
