"""Peak-rate search (``mwperf run --peak-search``): the highest rate a stream (or a graph, every
publisher scaled by one factor) keeps within its loss and latency limits, found as NVIDIA's
ros2_benchmark finds it (a binary search, then a short linear scan up from the best passing
rate), with every trial a saved point and the curve it walked reported.

- ``search.py``: the search itself, on any ``probe(rate) -> Trial`` (pure: tested on a system
  with a known capacity);
- ``verdict.py``: a point's or a graph's result -> passed or not, and why;
- ``run.py``: the trials as real measured points, repetitions, the saved ``peak.json``;
- ``show.py``: the curve and the peak as text.
"""
