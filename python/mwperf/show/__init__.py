"""What a result says, as text: ``mwperf run`` prints it under the run, ``mwperf show`` prints
it again after the fact.

One interface: a *section* renders one part of a result as whole lines, ``(result) -> str``,
'' when the result has none of it. ``details.SECTIONS`` lists a stream point's in their order
(each part's own module gives its ``section``: calls, throughput, layers); a graph run's are
``graph.render`` and ``soak.render``. ``table`` is the summary table (a row per point, the notes
under it), ``points`` the ``mwperf show`` command's loading."""
