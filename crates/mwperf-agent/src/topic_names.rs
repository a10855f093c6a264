//! Each topic's name (`--topics N`): what the report's `per_topic` calls it and what its raw
//! samples file is named after. Given with `--topic-name` (once per topic, in topic order: the
//! control plane passes a replay's recorded topic names, `/scan`, `/camera/image_raw`), else
//! `topic <i>`. The address stays beside it in `per_topic[].address`.
//!
//! With `--samples PATH` and several topics, topic i's samples go to PATH with `.<slug>`
//! before its extension (`samples.csv` → `samples.camera_image_raw.csv`, `samples.topic_0.csv`),
//! the slug being the name made safe for a file name ([`file_slugs`]). The control plane names
//! the files the same way (python/mwperf/topicnames.py); tests/vectors/topic_files.json holds
//! the cases both check.

/// Longest slug (a file name must stay under 255 bytes whatever the topic's name).
const MAX_SLUG: usize = 100;

/// The N topics' names: `given` (one per topic, non-empty, distinct), or `topic <i>` when none
/// were given. Err names the flag.
pub fn names(given: &[String], topics: u32) -> Result<Vec<String>, String> {
    if given.is_empty() {
        return Ok((0..topics).map(|i| format!("topic {i}")).collect());
    }
    if given.len() != topics as usize {
        return Err(format!(
            "--topic-name: {} names given for --topics {topics}; give one per topic, in topic order",
            given.len()
        ));
    }
    for (i, n) in given.iter().enumerate() {
        if n.trim().is_empty() {
            return Err(format!("--topic-name: topic {i}'s name is empty"));
        }
        if let Some(j) = given[..i].iter().position(|m| m == n) {
            return Err(format!(
                "--topic-name: topics {j} and {i} are both named '{n}'; give distinct names"
            ));
        }
    }
    Ok(given.to_vec())
}

/// One file-name-safe slug per name, distinct: every character but ASCII letters, digits, `_`
/// and `-` becomes `_`, leading and trailing `_` go, at most 100 characters; an empty slug is
/// `topic_<i>`, and a slug an earlier topic already has gets `-<i>` appended (until it is free).
pub fn file_slugs(names: &[String]) -> Vec<String> {
    let mut slugs: Vec<String> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut slug: String = safe.trim_matches('_').chars().take(MAX_SLUG).collect();
        if slug.is_empty() {
            slug = format!("topic_{i}");
        }
        while slugs.contains(&slug) {
            slug = format!("{slug}-{i}");
        }
        slugs.push(slug);
    }
    slugs
}

/// `base` with `.<slug>` inserted before the extension of its file name (appended when it has
/// none): `out/samples.csv` → `out/samples.scan.csv`, `out/raw` → `out/raw.scan`.
pub fn samples_path(base: &str, slug: &str) -> String {
    let file_at = base.rfind('/').map_or(0, |i| i + 1);
    match base[file_at..].rfind('.') {
        Some(dot) if dot > 0 => {
            let dot = file_at + dot;
            format!("{}.{slug}{}", &base[..dot], &base[dot..])
        }
        _ => format!("{base}.{slug}"),
    }
}

/// Each topic's samples file for `--samples base` (None without it).
pub fn samples_paths(base: Option<&str>, names: &[String]) -> Vec<Option<String>> {
    let slugs = file_slugs(names);
    slugs
        .iter()
        .map(|s| base.map(|b| samples_path(b, s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn default_and_given_names() {
        assert_eq!(names(&[], 2).unwrap(), strings(&["topic 0", "topic 1"]));
        let given = strings(&["/camera/image_raw", "/scan"]);
        assert_eq!(names(&given, 2).unwrap(), given);
        let e = names(&given, 3).unwrap_err();
        assert!(
            e.starts_with("--topic-name: 2 names given for --topics 3"),
            "{e}"
        );
        let e = names(&strings(&["/a", "/a"]), 2).unwrap_err();
        assert!(e.contains("topics 0 and 1 are both named '/a'"), "{e}");
        assert!(names(&strings(&["/a", " "]), 2)
            .unwrap_err()
            .contains("topic 1's name is empty"));
    }

    #[test]
    fn samples_paths_keep_the_extension() {
        assert_eq!(
            samples_path("/w/samples.csv", "scan"),
            "/w/samples.scan.csv"
        );
        assert_eq!(
            samples_path("samples.csv", "topic_0"),
            "samples.topic_0.csv"
        );
        assert_eq!(samples_path("/w.d/raw", "scan"), "/w.d/raw.scan");
        assert_eq!(samples_path("/w/.hidden", "scan"), "/w/.hidden.scan");
        assert_eq!(
            samples_paths(Some("s.csv"), &strings(&["/camera/image_raw", "/scan"])),
            vec![
                Some("s.camera_image_raw.csv".to_string()),
                Some("s.scan.csv".to_string())
            ]
        );
        assert_eq!(samples_paths(None, &strings(&["a"])), vec![None]);
    }

    /// The cases shared with the control plane (tests/test_topicnames.py).
    #[test]
    fn shared_topic_file_vectors() {
        let text = include_str!("../../../tests/vectors/topic_files.json");
        let cases: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in cases["cases"].as_array().unwrap() {
            let names: Vec<String> = case["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect();
            let files: Vec<String> = case["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect();
            let got: Vec<String> = samples_paths(Some("samples.csv"), &names)
                .into_iter()
                .map(Option::unwrap)
                .collect();
            assert_eq!(got, files, "names {names:?}");
        }
    }
}
