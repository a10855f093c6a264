"""Progress output: plain lines for logs, a bar with i/N and ETA on a terminal."""

import io

from mwperf.scenario.progress import Progress


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(2, out, tty=False)
    progress.plan(2.0)
    progress.start(1, "udp roundtrip 100 Hz Array64", 1.0)
    progress.finish(1, "udp roundtrip 100 Hz Array64: complete")
    progress.note(2, "iceoryx2 roundtrip 100 Hz Array64: skipped (not built)")
    progress.close()
    assert out.getvalue() == ("[1/2] udp roundtrip 100 Hz Array64 ...\n"
                              "[1/2] udp roundtrip 100 Hz Array64: complete\n"
                              "[2/2] iceoryx2 roundtrip 100 Hz Array64: skipped (not built)\n")


def test_a_bar_with_eta_on_a_terminal() -> None:
    out = io.StringIO()
    progress = Progress(4, out, tty=True)
    progress.plan(4 * 10.0)
    progress.start(1, "udp roundtrip 100 Hz Array64", 10.0)
    assert "[....................] 1/4 ETA 44.0s measuring udp roundtrip 100 Hz Array64" in (
        out.getvalue())  # 40 s planned + 1 s assumed overhead x 4 points
    progress.finish(1, "udp roundtrip 100 Hz Array64: complete  p50 50.0 µs")
    text = out.getvalue()
    assert "\r\x1b[K[1/4] udp roundtrip 100 Hz Array64: complete  p50 50.0 µs\n" in text
    assert text.endswith("] 1/4 ETA 30.0s ")  # 3 points of 10 s, no overhead measured (0 s)
    assert "[#####...............]" in text
    progress.close()
    assert out.getvalue().endswith("\r\x1b[K")

