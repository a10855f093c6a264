"""Real ROS 2 / DDS peers of the `mwperf probe --ros2` tests (peers.py)."""
