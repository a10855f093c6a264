"""What mwperf's rclpy programs share (relay.py, stream_sub.py, service_server.py: each run by a
ROS 2 distribution's own Python as a script, importing this file beside it as ``wire.py`` is):
rclpy's executors by name and a message class by its ``<pkg>/msg/<Type>`` name. Nothing here
imports rclpy until asked: mwperf's own Python reads ``EXECUTORS`` too (graph/clients.py)."""

import importlib

EXECUTORS = ("single", "multi", "events")
"""rclpy's SingleThreadedExecutor, MultiThreadedExecutor, rclpy.experimental.EventsExecutor"""


def executor(kind: str, threads: int = 2):  # type: ignore[no-untyped-def]
    """rclpy's executor ``kind`` (``multi``: at least 2 threads, ``threads`` when more)."""
    from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
    if kind == "multi":
        return MultiThreadedExecutor(num_threads=max(threads, 2))
    if kind == "events":
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    return SingleThreadedExecutor()


def message_class(name: str) -> type:
    """``<pkg>/msg/<Type>`` as its Python class."""
    package, _, type_name = name.partition("/msg/")
    return getattr(importlib.import_module(f"{package}.msg"), type_name)
