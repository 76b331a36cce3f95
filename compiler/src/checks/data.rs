//! Data-driven requests: a scenario's `data` file, the `{row.column}` placeholders its
//! requests use (checked against the file's header, which the CLI reads and hands over), and
//! the values virtual users `capture` for `{capture.name}`.

use super::{Checker, RequestsContext};
use crate::diagnostic::{Code, Diagnostic};
use crate::document::escape;
use crate::suggest::did_you_mean;
use headroom_spec::scenario::{Capture, DataMode};
use std::ops::Range;

impl<'a> Checker<'a> {
    /// `data`, `once` and `capture` of an HTTP scenario; sets what its requests may fill.
    pub(super) fn data_and_captures(&mut self, base: &str, http: &headroom_spec::HttpScenario) {
        let mut context = RequestsContext::default();
        let closed = !http.executor.is_open();
        if let Some(data) = &http.data {
            let pointer = format!("{base}/data/file");
            context.file = Some((data.file.clone(), pointer.clone()));
            match self.data.get(&data.file) {
                Some(Ok(columns)) => context.columns = Some(columns.clone()),
                Some(Err(why)) => self.push(
                    Diagnostic::new(Code::DataFile, format!("cannot use `{}`: {why}", data.file))
                        .at(&pointer, self.value_span(&pointer))
                        .label("a CSV file whose first line names the columns")
                        .hint("the path is relative to the spec; write the column names on the first line (`email,password`)"),
                ),
                None => {}
            }
            if data.mode == DataMode::Unique && !closed {
                let at = format!("{base}/data/mode");
                self.push(
                    Diagnostic::new(Code::ConflictingSettings, "`mode = \"unique\"` gives each virtual user its own row, and this scenario has none")
                        .at(&at, self.value_span(&at))
                        .label("an open-model (arrival-rate) scenario")
                        .hint("use `mode = \"sequential\"` or `\"random\"`, or a virtual-user executor"),
                );
            }
        }
        for (j, request) in http.requests.iter().enumerate() {
            let pointer = format!("{base}/requests/{j}");
            for (key, set) in [
                ("once", request.once),
                ("capture", !request.capture.is_empty()),
            ] {
                if set && !closed {
                    let at = format!("{pointer}/{key}");
                    self.push(
                        Diagnostic::new(Code::ExecutorConflict, format!("`{key}` is a virtual user's, and this scenario has none"))
                            .at(&at, self.key_span(&at))
                            .label("an open-model (arrival-rate) scenario")
                            .hint("use executor `constant-vus` or `ramping-vus` for a flow (log in, then browse)"),
                    );
                }
            }
            for (name, capture) in &request.capture {
                self.capture(
                    &format!("{pointer}/capture/{}", escape(name)),
                    name,
                    capture,
                );
                context.captures.push(name.clone());
            }
        }
        self.requests_context = Some(context);
    }

    /// One `capture`: a name that can be a placeholder, and exactly one way to find its value.
    fn capture(&mut self, pointer: &str, name: &str, capture: &Capture) {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            self.push(
                Diagnostic::new(Code::BadName, format!("`{name}` cannot name a capture"))
                    .at(pointer, self.key_span(pointer))
                    .label("used as `{capture.NAME}`")
                    .hint("use letters, digits, `_` and `-`"),
            );
        }
        match (&capture.json, &capture.regex) {
            (Some(_), Some(_)) | (None, None) => self.push(
                Diagnostic::new(
                    Code::ConflictingSettings,
                    format!("capture `{name}` needs exactly one of `json` and `regex`"),
                )
                .at(pointer, self.value_span(pointer))
                .label("where in the answer is the value?")
                .hint("write `{ json = \"/token\" }` or `{ regex = 'token=(\\w+)' }`"),
            ),
            (Some(json), None) if !json.starts_with('/') => {
                let at = format!("{pointer}/json");
                self.push(
                    Diagnostic::new(Code::WrongType, format!("`{json}` is not a JSON pointer"))
                        .at(&at, self.value_span(&at))
                        .label("a JSON pointer starts at the root, with `/`")
                        .hint(format!(
                            "write `\"/{json}\"` (RFC 6901: `/user/id`, `/items/0`)"
                        )),
                );
            }
            (None, Some(pattern)) => {
                if let Err(error) = regex::Regex::new(pattern) {
                    let at = format!("{pointer}/regex");
                    self.push(
                        Diagnostic::new(Code::BadPattern, format!("capture `{name}` is not a regular expression: {}", super::target::regex_error(&error)))
                            .at(&at, self.value_span(&at))
                            .label("does not compile")
                            .hint("write a Rust regex (https://docs.rs/regex); its first group is the value"),
                    );
                }
            }
            _ => {}
        }
    }

    /// Ends the requests of the HTTP scenario `name`: a data file none of them reads is said.
    pub(super) fn end_requests(&mut self, name: &str) {
        let Some(context) = self.requests_context.take() else {
            return;
        };
        if let (Some((file, pointer)), false) = (&context.file, context.rows_read) {
            self.push(
                Diagnostic::new(
                    Code::UnusedData,
                    format!("no request of scenario `{name}` reads `{file}`"),
                )
                .at(pointer, self.value_span(pointer))
                .label("no `{row.column}` in a URL, header or body")
                .hint("fill a request from it (`\"email\":\"{row.email}\"`), or remove `data`"),
            );
        }
    }

    /// `{row.column}` at `range` of the string at `pointer`: a column of the scenario's data.
    pub(super) fn row_placeholder(&mut self, pointer: &str, column: &str, range: Range<usize>) {
        if let Some(context) = self.requests_context.as_mut() {
            context.rows_read = true;
        }
        let span = self.inner_span(pointer, range);
        let context = self.requests_context.clone().unwrap_or_default();
        let Some((file, _)) = &context.file else {
            let (label, hint) = if self.requests_context.is_some() {
                (
                    "this scenario has no data file",
                    "add `data = { file = \"users.csv\" }` to the scenario, its first line naming the columns",
                )
            } else {
                (
                    "rows fill HTTP requests only",
                    "use `{row.…}` in the url, headers or body of a request of a scenario with `data`",
                )
            };
            self.push(
                Diagnostic::new(
                    Code::UnknownColumn,
                    format!("`{{row.{column}}}` has no row to come from"),
                )
                .at(pointer, span)
                .label(label)
                .hint(hint),
            );
            return;
        };
        let Some(columns) = &context.columns else {
            return;
        };
        if columns.iter().any(|c| c == column) {
            return;
        }
        let names = columns.join(", ");
        let hint = match did_you_mean(column, columns.iter().map(String::as_str)) {
            Some(guess) => format!("{guess} `{file}` has the columns: {names}"),
            None => format!("`{file}` has the columns: {names}"),
        };
        self.push(
            Diagnostic::new(
                Code::UnknownColumn,
                format!("`{file}` has no column `{column}`"),
            )
            .at(pointer, span)
            .label("not in the file's first line")
            .hint(hint),
        );
    }

    /// `{capture.name}`: a value some request of the scenario captures.
    pub(super) fn capture_placeholder(&mut self, pointer: &str, name: &str, range: Range<usize>) {
        let captures = self
            .requests_context
            .as_ref()
            .map(|c| c.captures.clone())
            .unwrap_or_default();
        if captures.iter().any(|c| c == name) {
            return;
        }
        let span = self.inner_span(pointer, range);
        let hint = match did_you_mean(name, captures.iter().map(String::as_str)) {
            Some(guess) => guess,
            None => format!(
                "capture it from an earlier answer: `capture = {{ {name} = {{ json = \"/{name}\" }} }}` on the request that returns it (a `once` request, say)"
            ),
        };
        self.push(
            Diagnostic::new(
                Code::UnknownPlaceholder,
                format!("`{{capture.{name}}}` is captured by no request of this scenario"),
            )
            .at(pointer, span)
            .label("nothing captures it")
            .hint(hint),
        );
    }
}
