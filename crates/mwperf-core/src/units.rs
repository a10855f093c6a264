//! Parsing of human quantities on the command line: durations (`10s`, `1.5ms`) and byte sizes
//! (`100`, `64KiB`). Both grammars are shared with the Python control plane through
//! `tests/vectors/durations.json` and `tests/vectors/sizes.json`.

/// Parse a duration like `10s`, `500ms`, `2m`, `1.5s`, `250us`/`250µs`, `100ns`, `1h`, or `0`.
/// A bare number other than 0 is rejected: the unit is never guessed.
pub fn parse_duration_ns(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("cannot parse '{text}'; use e.g. 10s, 500ms, 2m, 250us");
    if num.is_empty() || num.matches('.').count() > 1 || num.starts_with('.') || num.ends_with('.')
    {
        return Err(bad());
    }
    let scale: u64 = match unit {
        // a bare "0" only ("00", "0.0": rejected, as the Python side does)
        "" if num == "0" => 0,
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(bad()),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let int: u64 = int.parse().map_err(|_| bad())?;
    let mut ns = int.checked_mul(scale).ok_or_else(bad)?;
    // Fractional part: exact decimal arithmetic, rounding down below 1 ns.
    let mut place = scale;
    for d in frac.chars() {
        let digit = d.to_digit(10).ok_or_else(bad)? as u64;
        if !place.is_multiple_of(10) && digit != 0 {
            return Err(format!("'{text}' is finer than 1 ns"));
        }
        place /= 10;
        ns = ns.checked_add(digit * place).ok_or_else(bad)?;
    }
    // the Python side's limit (an i64 of nanoseconds: 292 years)
    if ns > i64::MAX as u64 {
        return Err(format!("'{text}' is too long"));
    }
    Ok(ns)
}

/// Format nanoseconds for people: `850 ns`, `5.71 µs`, `12.3 ms`, `2.00 s`.
pub fn format_ns(ns: f64) -> String {
    let (v, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    if unit == "ns" {
        format!("{v:.0} {unit}")
    } else if v < 10.0 {
        format!("{v:.2} {unit}")
    } else if v < 100.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// Parse a byte size (docs/cli.md, "Sizes"): a whole number of bytes, optionally followed by a
/// binary unit, in any case: `B`; `K` or `KiB` (1024); `M` or `MiB` (1024²); `G` or `GiB`
/// (1024³). `64k` is `64KiB`, as performance_test's message names write it (Array64k).
/// `KB`, `MB` and `GB` are refused: they leave the reader guessing which kilo was meant.
/// The control plane's `python/mwperf/sizes.py` accepts exactly the same texts
/// (`tests/vectors/sizes.json` holds the cases both run).
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || format!("cannot parse '{text}' as a size; {SIZE_HINT}");
    let mult: usize = match unit.to_ascii_lowercase().as_str() {
        _ if num.is_empty() => return Err(bad()),
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" | "mb" | "gb" => {
            return Err(format!(
                "'{text}': {unit} is ambiguous (1000 or 1024?); write {num}{}iB (binary) or the number of bytes",
                &unit[..1].to_ascii_uppercase()
            ))
        }
        _ => return Err(bad()),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("'{text}' is too large a size"))
}

/// What a size looks like, for error messages.
pub const SIZE_HINT: &str = "use a whole number of bytes with an optional binary unit, e.g. 100, 64KiB (or 64k), 4MiB, 1GiB";

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectors shared with the Python control plane.
    #[test]
    fn shared_duration_vectors() {
        let text = include_str!("../../../tests/vectors/durations.json");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in v["valid"].as_array().unwrap() {
            let (s, ns) = (case[0].as_str().unwrap(), case[1].as_u64().unwrap());
            assert_eq!(parse_duration_ns(s), Ok(ns), "{s}");
        }
        for s in v["invalid"].as_array().unwrap() {
            let s = s.as_str().unwrap();
            assert!(parse_duration_ns(s).is_err(), "{s} should be rejected");
        }
    }

    /// The size vectors shared with the control plane (python/mwperf/sizes.py).
    #[test]
    fn shared_size_vectors() {
        let text = include_str!("../../../tests/vectors/sizes.json");
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in v["valid"].as_array().unwrap() {
            let (s, n) = (case[0].as_str().unwrap(), case[1].as_u64().unwrap());
            assert_eq!(parse_bytes(s), Ok(n as usize), "{s}");
        }
        for case in v["invalid"].as_array().unwrap() {
            let (s, says) = (case[0].as_str().unwrap(), case[1].as_str().unwrap());
            let err = parse_bytes(s).expect_err(s);
            assert!(err.contains(says), "{s}: {err} does not say '{says}'");
        }
    }

    #[test]
    fn formatting() {
        assert_eq!(format_ns(5710.0), "5.71 µs");
        assert_eq!(format_ns(12_300_000.0), "12.3 ms");
        assert_eq!(format_ns(850.0), "850 ns");
    }
}
