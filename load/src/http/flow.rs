//! Data-driven requests and virtual users' flows: the rows of a scenario's data file, the
//! `{row.column}` and `{capture.name}` a request fills each time it is sent, and the values a
//! virtual user captures from answers for its later requests (a login's token).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use headroom_spec::placeholder::{self, PlaceholderName};
use headroom_spec::scenario::{Capture, DataMode, DataSource};
use rand::Rng;

use headroom_spec::scenario::{MAX_DATA_BYTES, MAX_DATA_ROWS as MAX_ROWS};

/// A scenario's data file, read once before the load, and who gets which row.
pub(super) struct Rows {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    mode: DataMode,
    next: AtomicUsize,
}

impl Rows {
    /// The rows of `source.file` (relative to `spec_dir`), each field checked: no line breaks
    /// (they would end a header or the request line), as many fields as columns.
    pub(super) fn read(source: &DataSource, spec_dir: &Path) -> Result<Rows, String> {
        let path = spec_dir.join(&source.file);
        let written = &source.file;
        let metadata = std::fs::metadata(&path)
            .map_err(|e| format!("data file `{written}` ({}): {e}", path.display()))?;
        if !metadata.is_file() {
            return Err(format!(
                "data file `{written}` is not a regular file (a device, a pipe or a folder): name a CSV file"
            ));
        }
        let size = metadata.len();
        if size > MAX_DATA_BYTES {
            return Err(format!(
                "data file `{written}` is {size} bytes, over the {MAX_DATA_BYTES} a run reads: use fewer rows"
            ));
        }
        let mut reader = csv::ReaderBuilder::new()
            .from_path(&path)
            .map_err(|e| format!("data file `{written}`: {e}"))?;
        let columns: Vec<String> = reader
            .headers()
            .map_err(|e| format!("data file `{written}`: {e}"))?
            .iter()
            .map(|c| c.trim().to_owned())
            .collect();
        let mut rows = Vec::new();
        for (i, record) in reader.records().enumerate() {
            let line = i + 2;
            let record = record.map_err(|e| format!("data file `{written}`, line {line}: {e}"))?;
            if record.iter().any(|field| field.contains(['\r', '\n'])) {
                return Err(format!(
                    "data file `{written}`, line {line}: a field holds a line break, which would end a header or the request line"
                ));
            }
            rows.push(record.iter().map(str::to_owned).collect());
            if rows.len() > MAX_ROWS {
                return Err(format!(
                    "data file `{written}` has over {MAX_ROWS} rows: use fewer"
                ));
            }
        }
        if rows.is_empty() {
            return Err(format!("data file `{written}` has no row below its header"));
        }
        Ok(Rows {
            columns,
            rows,
            mode: source.mode,
            next: AtomicUsize::new(0),
        })
    }

    /// Rows in the file.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The next row by the mode: `None` once `unique` rows run out.
    pub(super) fn take(&self) -> Option<usize> {
        match self.mode {
            DataMode::Sequential => Some(self.next.fetch_add(1, Ordering::Relaxed) % self.len()),
            DataMode::Random => Some(rand::rng().random_range(0..self.len())),
            DataMode::Unique => {
                let row = self.next.fetch_add(1, Ordering::Relaxed);
                (row < self.len()).then_some(row)
            }
        }
    }

    /// The value of `column` in `row`.
    fn value(&self, row: usize, column: &str) -> Option<&str> {
        let at = self.columns.iter().position(|c| c == column)?;
        self.rows.get(row)?.get(at).map(String::as_str)
    }
}

/// What one send fills in: its row, and the values its virtual user captured so far (by the
/// index of the capture's name in the scenario).
#[derive(Debug, Default)]
pub(super) struct UserData {
    pub(super) row: Option<usize>,
    pub(super) captured: Vec<Option<String>>,
}

/// The parts of a request that vary per send: its path, headers and body, placeholders in;
/// with what its bytes are made from.
pub(super) struct Template {
    pub(super) method: String,
    pub(super) secure: bool,
    pub(super) authority: String,
    pub(super) path: String,
    pub(super) headers: Vec<(String, String)>,
    pub(super) body: String,
}

/// Whether `text` has `{row.…}` or `{capture.…}` to fill per send.
pub(super) fn varies(text: &str) -> bool {
    placeholder::scan(text).into_iter().flatten().any(|p| {
        matches!(
            p.name,
            PlaceholderName::Row(_) | PlaceholderName::Capture(_)
        )
    })
}

/// The names of a scenario's captures, each once, in the order of its requests.
pub(super) fn capture_names<'a>(
    captures: impl Iterator<Item = &'a std::collections::BTreeMap<String, Capture>>,
) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for map in captures {
        for name in map.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

impl Template {
    /// The path, headers and body with `user`'s row and captures filled; a value not there
    /// (no row, nothing captured yet) fills as empty. Spaces in the path are encoded.
    pub(super) fn fill(
        &self,
        rows: Option<&Rows>,
        names: &[String],
        user: &UserData,
    ) -> (String, Vec<(String, String)>, String) {
        let fill = |text: &str| {
            placeholder::fill(text, |name| match name {
                PlaceholderName::Row(column) => Some(
                    rows.zip(user.row)
                        .and_then(|(rows, row)| rows.value(row, column))
                        .unwrap_or_default()
                        .to_owned(),
                ),
                PlaceholderName::Capture(capture) => Some(
                    names
                        .iter()
                        .position(|n| n == capture)
                        .and_then(|i| user.captured.get(i)?.clone())
                        .unwrap_or_default(),
                ),
                _ => None,
            })
        };
        let path = fill(&self.path).replace(' ', "%20");
        let headers = self
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), fill(value)))
            .collect();
        (path, headers, fill(&self.body))
    }
}

/// How one captured value is found in a body.
pub(super) enum Captor {
    Json(String),
    Regex(regex::bytes::Regex),
}

impl Captor {
    /// The captor of `capture` (checked by the compiler; `url` names the request in errors).
    pub(super) fn of(capture: &Capture, url: &str) -> Result<Captor, String> {
        match (&capture.json, &capture.regex) {
            (Some(pointer), _) => Ok(Captor::Json(pointer.clone())),
            (None, Some(pattern)) => regex::bytes::Regex::new(pattern)
                .map(Captor::Regex)
                .map_err(|e| format!("a capture of `{url}`: {e}")),
            (None, None) => Err(format!(
                "a capture of `{url}` says neither `json` nor `regex`"
            )),
        }
    }

    /// The value in `body`: a JSON string as is, another JSON value as its text; a regex's
    /// first group, or its whole match. A value with a line break is not taken: it would end
    /// the header or the request line it fills.
    pub(super) fn find(&self, body: &[u8]) -> Option<String> {
        self.found(body)
            .filter(|value| !value.contains(['\r', '\n']))
    }

    fn found(&self, body: &[u8]) -> Option<String> {
        match self {
            Captor::Json(pointer) => {
                let document: serde_json::Value = serde_json::from_slice(body).ok()?;
                match document.pointer(pointer)? {
                    serde_json::Value::String(text) => Some(text.clone()),
                    other => Some(other.to_string()),
                }
            }
            Captor::Regex(regex) => {
                let found = regex.captures(body)?;
                let matched = found.get(1).or_else(|| found.get(0))?;
                String::from_utf8(matched.as_bytes().to_vec()).ok()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, mode: DataMode) -> Result<Rows, String> {
        let dir = std::env::temp_dir().join(format!(
            "headroom-rows-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("users.csv"), text).expect("write");
        let source = DataSource {
            file: "users.csv".to_owned(),
            mode,
        };
        let read = Rows::read(&source, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        read
    }

    #[test]
    fn rows_are_handed_out_by_mode() {
        let text = "email,password\na@x,1\nb@x,2\nc@x,3\n";
        let sequential = rows(text, DataMode::Sequential).expect("rows");
        let taken: Vec<_> = (0..5).map(|_| sequential.take()).collect();
        assert_eq!(taken, [Some(0), Some(1), Some(2), Some(0), Some(1)]);
        assert_eq!(sequential.value(1, "password"), Some("2"));
        assert_eq!(sequential.value(1, "missing"), None);
        let unique = rows(text, DataMode::Unique).expect("rows");
        let taken: Vec<_> = (0..4).map(|_| unique.take()).collect();
        assert_eq!(taken, [Some(0), Some(1), Some(2), None]);
        let random = rows(text, DataMode::Random).expect("rows");
        assert!((0..50).all(|_| random.take().is_some_and(|r| r < 3)));
    }

    #[test]
    fn a_bad_data_file_says_which_line() {
        let broken = rows("a,b\n1,2\n3\n", DataMode::Sequential)
            .err()
            .expect("short");
        assert!(broken.contains("line 3"), "{broken}");
        let newline = rows("a\n\"x\ny\"\n", DataMode::Sequential)
            .err()
            .expect("newline");
        assert!(newline.contains("line break"), "{newline}");
        let empty = rows("a,b\n", DataMode::Sequential).err().expect("no rows");
        assert!(empty.contains("no row"), "{empty}");
    }

    #[test]
    fn a_template_fills_rows_and_captures_per_user() {
        let users = rows("email,name\nada@x,Ada Lovelace\n", DataMode::Sequential).expect("rows");
        let template = Template {
            method: "POST".to_owned(),
            secure: false,
            authority: "127.0.0.1:8080".to_owned(),
            path: "/users/{row.name}?t={capture.token}".to_owned(),
            headers: vec![(
                "authorization".to_owned(),
                "Bearer {capture.token}".to_owned(),
            )],
            body: r#"{"email":"{row.email}"}"#.to_owned(),
        };
        let names = vec!["token".to_owned()];
        let user = UserData {
            row: Some(0),
            captured: vec![Some("t0k".to_owned())],
        };
        let (path, headers, body) = template.fill(Some(&users), &names, &user);
        assert_eq!(path, "/users/Ada%20Lovelace?t=t0k");
        assert_eq!(headers[0].1, "Bearer t0k");
        assert_eq!(body, r#"{"email":"ada@x"}"#);
        assert!(varies("{row.email}") && varies("x{capture.t}") && !varies("{port}"));
    }

    #[test]
    fn captures_find_json_and_regex_values() {
        let body = br#"{"token":"abc","user":{"id":42}}"#;
        let json = |p: &str| Captor::Json(p.to_owned()).find(body);
        assert_eq!(json("/token").as_deref(), Some("abc"));
        assert_eq!(json("/user/id").as_deref(), Some("42"));
        assert_eq!(json("/nope"), None);
        let regex = |r: &str| Captor::Regex(regex::bytes::Regex::new(r).expect("regex")).find(body);
        assert_eq!(regex(r#""id":(\d+)"#).as_deref(), Some("42"));
        assert_eq!(regex(r"abc").as_deref(), Some("abc"));
        assert_eq!(regex(r"zzz"), None);
        // A value that would split a header is not taken.
        let split = br#"{"token":"a\r\nx-admin: 1"}"#;
        assert_eq!(Captor::Json("/token".to_owned()).find(split), None);
    }
}
