"""Recordings: ROS 1 bags, ROS 2 MCAP files and rosbag2 folders, read with ``rosbags``.

``recording`` opens one (checking it first: a missing, truncated or unknown file is one line
naming it), ``info`` summarises its topics, ``example`` writes seed 000's example recording.
"""
