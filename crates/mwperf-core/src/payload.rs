//! The payload catalogue: performance_test's message names mapped to runtime sizes.
//! Sizes are the bytes *after* the 56-byte mwperf header (performance_test's types likewise
//! carry their id and timestamp beside the data array). Any other byte count is allowed.

use crate::units::parse_bytes;

const KI: usize = 1024;
const MI: usize = 1024 * 1024;

/// (name, payload bytes), in ascending size within each family.
pub const CATALOGUE: &[(&str, usize)] = &[
    ("Array32", 32),
    ("Array64", 64),
    ("Array128", 128),
    ("Array256", 256),
    ("Array512", 512),
    ("Array1k", KI),
    ("Array2k", 2 * KI),
    ("Array4k", 4 * KI),
    ("Array8k", 8 * KI),
    ("Array16k", 16 * KI),
    ("Array32k", 32 * KI),
    ("Array60k", 60 * KI),
    ("Array64k", 64 * KI),
    ("Array256k", 256 * KI),
    ("Array1m", MI),
    ("Array2m", 2 * MI),
    ("Array4m", 4 * MI),
    ("Struct16", 16),
    ("Struct256", 256),
    ("Struct4k", 4 * KI),
    ("Struct32k", 32 * KI),
    ("PointCloud512k", 512 * KI),
    ("PointCloud1m", MI),
    ("PointCloud2m", 2 * MI),
    ("PointCloud4m", 4 * MI),
];

/// Largest payload accepted (beyond it, buffers stop being a messaging benchmark).
pub const MAX_PAYLOAD: usize = 64 * MI;

/// Resolve a catalogue name (case-insensitive) or a size (`units::parse_bytes`'s grammar) of at
/// most [`MAX_PAYLOAD`] bytes.
pub fn resolve(text: &str) -> Result<usize, String> {
    if let Some((_, n)) = CATALOGUE
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text.trim()))
    {
        return Ok(*n);
    }
    if !text.trim().starts_with(|c: char| c.is_ascii_digit()) {
        return Err(format!(
            "unknown payload '{text}'; use a catalogue name ({}; see 'mwperf-agent payloads') or a size such as 100 or 64KiB",
            families()
        ));
    }
    let n = parse_bytes(text)?;
    if n > MAX_PAYLOAD {
        return Err(format!(
            "payload of {n} bytes is above the agent's limit of {MAX_PAYLOAD} bytes (64 MiB)"
        ));
    }
    Ok(n)
}

/// The catalogue's families, each as its first and last name: `Array32 … Array4m, ...`.
fn families() -> String {
    fn family(name: &str) -> &str {
        name.split(|c: char| c.is_ascii_digit())
            .next()
            .unwrap_or("")
    }
    let mut spans: Vec<(&str, &str)> = Vec::new();
    for (name, _) in CATALOGUE {
        match spans.last_mut() {
            Some((first, last)) if family(first) == family(name) => *last = name,
            _ => spans.push((name, name)),
        }
    }
    spans
        .iter()
        .map(|(a, b)| format!("{a} \u{2026} {b}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sizes_and_errors() {
        assert_eq!(resolve("Array1k"), Ok(1024));
        assert_eq!(resolve("pointcloud512k"), Ok(524_288));
        assert_eq!(resolve("100"), Ok(100));
        assert_eq!(resolve("0"), Ok(0));
        assert!(resolve("Array3k")
            .unwrap_err()
            .contains("unknown payload 'Array3k'"));
        assert!(resolve("65MiB").unwrap_err().contains("limit"));
        assert!(resolve("64KB").unwrap_err().contains("ambiguous"));
        assert_eq!(resolve("64k"), Ok(65536));
        assert_eq!(resolve("1GiB").map_err(|e| e.contains("limit")), Err(true));
        assert_eq!(
            families(),
            "Array32 \u{2026} Array4m, Struct16 \u{2026} Struct32k, PointCloud512k \u{2026} PointCloud4m"
        );
    }
}
