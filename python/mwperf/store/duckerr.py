"""DuckDB's error messages as one line for a person: the message without the SQL excerpt
(``LINE 1: ...`` and its caret) DuckDB appends."""


def one_line(exc: BaseException) -> str:
    """``exc``'s message up to DuckDB's ``LINE n:`` excerpt, whitespace collapsed."""
    text = str(exc).split("\nLINE ")[0]
    return " ".join(text.split()) or type(exc).__name__
