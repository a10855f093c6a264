"""The output formats of ``mwperf report``, ``compare`` and ``query`` (their ``--format``
choices): here, not in those commands' packages, so the command line can offer them without
loading the packages (each costs tens of ms of CPU at every ``mwperf`` start)."""

REPORT_FORMATS = ("html", "markdown", "csv", "json")
COMPARE_FORMATS = ("table", "markdown", "json")
QUERY_FORMATS = ("table", "csv", "json")
