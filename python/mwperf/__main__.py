"""``python -m mwperf``: the same as the ``mwperf`` command."""

from .cli import main

main()
