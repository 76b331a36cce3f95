//! "Did you mean …?": the closest known name to a misspelt one.

/// The candidate closest to `name`, if it is close enough to be a likely typo.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .filter(|candidate| *candidate != name)
        .map(|candidate| {
            let d = strsim::levenshtein(&lower, &candidate.to_lowercase());
            // A case-only difference or a missing separator is the likeliest typo of all.
            let d = if lower.replace(['_', '-', '.'], "")
                == candidate.to_lowercase().replace(['_', '-', '.'], "")
            {
                0
            } else {
                d
            };
            (d, candidate)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, candidate)| (*d, *candidate))
        .map(|(_, candidate)| candidate)
}

/// `did you mean `x`?` or nothing.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(name, candidates).map(|found| format!("did you mean `{found}`?"))
}

/// `did you mean `{port}`?` for a misspelt placeholder, or nothing.
pub fn did_you_mean_placeholder<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(name, candidates).map(|found| format!("did you mean `{{{found}}}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_typos_and_refuses_strangers() {
        let keys = ["peers_per_room", "rooms", "url", "join"];
        assert_eq!(closest("peer_per_room", keys), Some("peers_per_room"));
        assert_eq!(closest("peersperroom", keys), Some("peers_per_room"));
        assert_eq!(closest("room", keys), Some("rooms"));
        assert_eq!(closest("executor", keys), None);
        assert_eq!(
            closest("t4g.meduim", ["t4g.medium", "t4g.micro"]),
            Some("t4g.medium")
        );
    }
}
