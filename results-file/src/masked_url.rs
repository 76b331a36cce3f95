//! URLs as headroom records and prints them: a URL's userinfo (`user:password@`) and the values
//! of its query (`?key=…`) may be secrets, so they are masked (`***@`, `?key=***`) in the
//! results file, on the terminal and in every message. A value that is a placeholder as the
//! spec wrote it (`?user={row.email}`, `?token={env:TOKEN}`) stays: it names, it holds nothing.

/// What stands for a masked part.
pub const MASK: &str = "***";

/// `text` with every URL in it masked: each `scheme://…`, and each word that is a path with a
/// query (`/search?q=…`, a request's URL relative to the target). A URL ends at whitespace or a
/// quote or angle bracket (`"`, `'`, `` ` ``, `<`, `>`), less the punctuation that closes a
/// sentence (`:`, `,`, `;`, `.`, `)`), so a message or a page around it stays whole.
pub fn masked_urls(text: &str) -> String {
    let mut masked = String::with_capacity(text.len());
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end_matches(char::is_whitespace);
        masked.push_str(&masked_word(word));
        masked.push_str(&piece[word.len()..]);
    }
    masked
}

/// The characters no URL here holds: where one ends.
const URL_ENDS: [char; 5] = ['"', '\'', '`', '<', '>'];

/// One word (no whitespace) with its URLs masked.
fn masked_word(word: &str) -> String {
    let opened = word.trim_start_matches(['`', '\'', '"', '(', '<']);
    if opened.starts_with('/') && !opened.contains("://") {
        let (url, after) = url_and_after(opened);
        return format!(
            "{}{}{after}",
            &word[..word.len() - opened.len()],
            masked_query(url)
        );
    }
    let mut masked = String::with_capacity(word.len());
    let mut rest = word;
    while let Some(at) = rest.find("://") {
        let scheme_start = rest[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(at, |(i, _)| i);
        let after_scheme = at + "://".len();
        masked.push_str(&rest[..scheme_start]);
        if scheme_start == at {
            masked.push_str(&rest[at..after_scheme]);
            rest = &rest[after_scheme..];
            continue;
        }
        let (url, after) = url_and_after(&rest[scheme_start..]);
        masked.push_str(&masked_url(url, after_scheme - scheme_start));
        rest = after;
    }
    masked.push_str(rest);
    masked
}

/// A URL at the start of `text`, and what follows it.
fn url_and_after(text: &str) -> (&str, &str) {
    let end = text.find(URL_ENDS).unwrap_or(text.len());
    let url = text[..end].trim_end_matches([':', ',', ';', '.', ')']);
    text.split_at(url.len())
}

/// One URL (`scheme://` ends at `after_scheme`): its userinfo and query values masked.
fn masked_url(url: &str, after_scheme: usize) -> String {
    let (scheme, rest) = url.split_at(after_scheme);
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rfind('@') {
        Some(at) => format!("{MASK}{}", &authority[at..]),
        None => authority.to_owned(),
    };
    format!("{scheme}{authority}{}", masked_query(path))
}

/// A path with its query's values masked, the fragment kept.
fn masked_query(path: &str) -> String {
    let Some((before, query)) = path.split_once('?') else {
        return path.to_owned();
    };
    let (query, fragment) = match query.split_once('#') {
        Some((query, fragment)) => (query, Some(fragment)),
        None => (query, None),
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !value.is_empty() && !is_placeholder(value) => {
                format!("{key}={MASK}")
            }
            _ => pair.to_owned(),
        })
        .collect();
    let mut masked = format!("{before}?{}", pairs.join("&"));
    if let Some(fragment) = fragment {
        masked.push('#');
        masked.push_str(fragment);
    }
    masked
}

/// A value that is one placeholder as written (`{row.email}`, `{env:TOKEN}`).
fn is_placeholder(value: &str) -> bool {
    value.starts_with('{') && value.ends_with('}') && value.matches('{').count() == 1
}

/// Every string in `value` with its URLs masked ([`masked_urls`]).
pub fn mask_every_url(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) if text.contains("://") || text.contains('?') => {
            *text = masked_urls(text);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(mask_every_url),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(mask_every_url),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_and_query_values_are_masked_placeholders_kept() {
        let cases = [
            (
                "http://user:pw@127.0.0.1:9090/api/v1/write",
                "http://***@127.0.0.1:9090/api/v1/write",
            ),
            (
                "http://127.0.0.1:{port}/notes?key=s3cr3t&user={row.email}&flag",
                "http://127.0.0.1:{port}/notes?key=***&user={row.email}&flag",
            ),
            ("/search?q=hello&empty=#top", "/search?q=***&empty=#top"),
            (
                "cannot connect to https://a:b@x.test/p?t=1: refused",
                "cannot connect to https://***@x.test/p?t=***: refused",
            ),
            (
                "--db=postgres://app:hunter2@127.0.0.1/app",
                "--db=postgres://***@127.0.0.1/app",
            ),
            (
                "ws://127.0.0.1:{port}/socket",
                "ws://127.0.0.1:{port}/socket",
            ),
            ("/healthz", "/healthz"),
            ("no url :// here", "no url :// here"),
            ("naïve://é@x/?k=v", "naïve://***@x/?k=***"),
            ("(see `/x?token=abc`).", "(see `/x?token=***`)."),
            ("what? no url", "what? no url"),
            (
                "<a href=\"https://x.test/?y=z\">https://x.test/?y=z</a>",
                "<a href=\"https://x.test/?y=***\">https://x.test/?y=***</a>",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(masked_urls(text), want, "{text}");
        }
    }

    #[test]
    fn every_string_of_a_document_is_masked() {
        let mut value = serde_json::json!({
            "url": "http://127.0.0.1:1/x?token=abc",
            "command": ["node", "server.js", "--upstream", "http://u:p@127.0.0.1:2/"],
            "runs": [{"error": "GET /x?token=abc timed out"}],
            "count": 3
        });
        mask_every_url(&mut value);
        let text = value.to_string();
        assert!(!text.contains("abc") && !text.contains("u:p"), "{text}");
        assert!(text.contains("\"count\":3"), "{text}");
    }
}
