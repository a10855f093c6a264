"""Byte sizes for --payload."""

import pytest

from mwperf.sizes import format_bytes, parse_size


@pytest.mark.parametrize(("text", "size"), [("100", 100), ("0", 0), ("64KiB", 65536),
                                            ("4MiB", 4 << 20), ("12B", 12), (" 1KiB ", 1024)])
def test_parse(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "64KB", "1.5KiB", "-1", "kib", "64 KiB"])
def test_reject(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


@pytest.mark.parametrize(("size", "text"), [(64, "64 B"), (16384, "16 KiB"),
                                            (1536 * 1024, "1.5 MiB"), (1048575, "1024 KiB")])
def test_format(size: int, text: str) -> None:
    assert format_bytes(size) == text
