"""Byte sizes: the shared vectors (the agent's parse_bytes runs the same file) and the human
format."""

import json

import pytest

from mwperf import REPO_ROOT
from mwperf.sizes import format_bytes, parse_size

VECTORS = json.loads((REPO_ROOT / "tests" / "vectors" / "sizes.json").read_text("utf-8"))


@pytest.mark.parametrize(("text", "size"), VECTORS["valid"])
def test_valid_vectors(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize(("text", "says"), VECTORS["invalid"])
def test_invalid_vectors(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_size(text)


def test_ambiguous_units_say_what_to_write() -> None:
    with pytest.raises(ValueError, match="write 64KiB"):
        parse_size("64KB")


@pytest.mark.parametrize(("size", "text"), [(64, "64 B"), (16384, "16 KiB"),
                                            (1536 * 1024, "1.5 MiB"), (1048575, "1024 KiB")])
def test_format(size: int, text: str) -> None:
    assert format_bytes(size) == text
