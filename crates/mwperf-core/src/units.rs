//! Parsing of human quantities on the command line: durations (`10s`, `1.5ms`) and byte sizes
//! (`100`, `64KiB`). The grammar is shared with the Python control plane through
//! `tests/vectors/durations.json`.

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

/// Parse a byte count: `100`, `1k`/`1KiB` (1024), `4MiB`, `2m` (binary multiples, as the
/// performance_test catalogue uses).
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" | "kb" => 1 << 10,
        "m" | "mib" | "mb" => 1 << 20,
        _ => return Err(format!("cannot parse '{text}' as a size")),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("cannot parse '{text}' as a size"))
}

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

    #[test]
    fn sizes_and_formatting() {
        assert_eq!(parse_bytes("64KiB"), Ok(65536));
        assert_eq!(parse_bytes("100"), Ok(100));
        assert!(parse_bytes("-1").is_err());
        assert_eq!(format_ns(5710.0), "5.71 µs");
        assert_eq!(format_ns(12_300_000.0), "12.3 ms");
        assert_eq!(format_ns(850.0), "850 ns");
    }
}
