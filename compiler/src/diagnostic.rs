//! Diagnostics are data: the compiler returns them all, the CLI renders them.

use std::ops::Range;

use serde::Serialize;

/// Whether a diagnostic stops the spec from compiling.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The spec cannot run.
    Error,
    /// The spec runs, but probably not as meant.
    Warning,
    /// The spec runs as meant; something to know about what it measures.
    Note,
}

impl Severity {
    /// As the JSON form writes it: `error`, `warning`, `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $slug:literal, $severity:ident, $summary:literal;)*) => {
        /// A stable diagnostic code. Codes are never reused; `docs/diagnostics.md` lists them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $(#[doc = $summary] $variant,)*
        }

        impl Code {
            /// Every code, in order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// `E012`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)*
                }
            }

            /// `unknown-placeholder`: the name of the fixture that shows it.
            pub fn slug(self) -> &'static str {
                match self {
                    $(Code::$variant => $slug,)*
                }
            }

            /// Whether the code is an error or a warning.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// One line on what the code means.
            pub fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }
        }
    };
}

codes! {
    TomlSyntax = "E001", "toml-syntax", Error, "The file is not valid TOML.";
    UnknownKey = "E002", "unknown-key", Error, "A key the table does not have (often a typo).";
    WrongType = "E003", "wrong-type", Error, "A value of the wrong type (a string where a number goes).";
    MissingKey = "E004", "missing-key", Error, "A required key is absent.";
    OutOfRange = "E005", "out-of-range", Error, "A number or list outside its allowed range.";
    BadDuration = "E006", "bad-duration", Error, "A duration without a unit or with an unknown one.";
    BadSize = "E007", "bad-size", Error, "A size without a unit or with an unknown one.";
    BadRate = "E008", "bad-rate", Error, "A rate that is not `N/s`, `N/m` or `N/h`.";
    BadPercentage = "E009", "bad-percentage", Error, "A percentage without its `%`.";
    UnknownChoice = "E010", "unknown-choice", Error, "A value outside the allowed set (an executor, a signal).";
    MisplacedKey = "E011", "misplaced-key", Error, "A key TOML put into the wrong table: it was written after another table's header.";
    UnknownPlaceholder = "E012", "unknown-placeholder", Error, "A placeholder that names no variable or built-in.";
    UnknownVariable = "E013", "unknown-variable", Error, "A phase or the capacity model names a variable `[vars]` does not declare.";
    UnusedSweep = "E014", "unused-sweep", Error, "A phase varies a variable that nothing uses, so every point would be the same.";
    UnknownFigure = "E015", "unknown-figure", Error, "An SLO over a figure no scenario produces.";
    BadSlo = "E016", "bad-slo", Error, "An SLO that is not `figure < value`.";
    UnknownInstance = "E017", "unknown-instance", Error, "An instance type that is not in the price table.";
    UnknownDatabase = "E018", "unknown-database", Error, "A database class that is not in the price table.";
    DuplicateName = "E019", "duplicate-name", Error, "Two scenarios, phases, series or instances with one name.";
    ExecutorConflict = "E020", "executor-conflict", Error, "A setting the scenario's executor does not use (`vus` with an arrival rate).";
    ConflictingSettings = "E021", "conflicting-settings", Error, "Two settings that exclude each other.";
    MissingSetting = "E022", "missing-setting", Error, "A setting the rest of the spec needs (a rate for an arrival-rate executor, a hold).";
    RateRoundsToZero = "E023", "rate-rounds-to-zero", Error, "A rate so low that a point sends nothing during its hold.";
    RampTooLong = "E024", "ramp-too-long", Error, "A ramp longer than the stage it belongs to.";
    UnclosedPlaceholder = "E025", "unclosed-placeholder", Error, "A `{name` with no closing brace.";
    VariableType = "E026", "variable-type", Error, "A variable's value does not fit where the variable is used.";
    EmptySweep = "E027", "empty-sweep", Error, "A phase axis with no values.";
    BadRange = "E028", "bad-range", Error, "A range that counts down, has no step, or never ends.";
    HostNotAllowed = "E029", "host-not-allowed", Error, "Load aimed at a host that is neither loopback nor in `allow_hosts`.";
    UnknownReference = "E030", "unknown-reference", Error, "A phase or the capacity model names a scenario, phase or series that does not exist.";
    SloUnit = "E031", "slo-unit", Error, "An SLO threshold in the wrong unit for its figure (a latency against a percentage).";
    BadName = "E032", "bad-name", Error, "A name with characters it may not have.";
    ReservedName = "E033", "reserved-name", Error, "A variable or series named like a built-in (`port`, `rss`).";
    PhaseMissesUnits = "E034", "phase-misses-units", Error, "The memory or ceiling phase does not vary the variable that counts units, so it cannot give a figure per unit.";
    NotImplemented = "E035", "not-implemented", Error, "A setting headroom reads but does not carry out yet: the spec is refused rather than run without it.";
    BadPattern = "E036", "bad-pattern", Error, "A regular expression that does not compile (`ready.log`).";
    RegionNotPriced = "E037", "region-not-priced", Error, "`[plan] region` names a region the price table has no prices for.";
    TooLarge = "E038", "too-large", Error, "A matrix, a run or a message larger than one machine should be asked to handle (the limits are in docs/cli.md).";
    BadGate = "E039", "bad-gate", Error, "A `[compare] fail_on` gate that is not a figure and a signed percentage (`latency.p95 +10%`), or that names a figure by a name `compare` no longer uses (`rss_mib` is `rss`).";
    InsecureTls = "E040", "insecure-tls", Error, "`insecure_skip_verify` with a URL whose host is not loopback: certificates go unchecked on loopback only.";
    UnknownColumn = "E041", "unknown-column", Error, "`{row.NAME}` names a column the scenario's data file does not have, or a scenario without `data`.";
    DataFile = "E042", "data-file", Error, "A scenario's data file cannot be read, or has no header line of column names.";
    SourceAddresses = "E043", "source-addresses", Error, "`[generator] source_addresses` that is not `spread`, an address block or a list of one family's addresses, or does not fit the target (`spread` needs an IPv4 loopback target).";
    Stack = "E044", "stack", Error, "A stack (`[target.services]`) that cannot start: a service `after` itself or one that does not exist, a circle of `after`s, several services and no `front`, or a setting that belongs on a service.";
    PhaseTarget = "E045", "phase-target", Error, "One target for a whole phase that cannot be kept: with `process = \"per-phase\"` the target differs between a phase's points (a swept variable in its command, env or limits), or a step with `per = \"phase\"` differs between them or has no target that lives for the phase.";
    BadSearch = "E046", "bad-search", Error, "A search (`vary = { x = { search = … } }`) that cannot run as written: beside another axis, a budget of runs or time too small to confirm its ends or a time budget over a week, a probe hold under a second or longer than the hold, or a start at or past `[capacity] cap`.";
    HoldsApart = "E047", "holds-apart", Error, "Scenarios of one run that cannot hold their loads together for one hold: their holds differ, or one has a hold and another none. A run measures every scenario over the one window in which all of them are at their load.";
    MissingPath = "E048", "missing-path", Error, "A working directory or CA file the spec names (relative to it) that is not on this machine, or a CA file that holds no PEM certificate: refused before anything starts, not when the point that needs it is reached.";
    SocketIo = "E049", "socket-io", Error, "A Socket.IO setting the protocol cannot carry: a join that is not a JSON array led by its event's name, an auth that is not a JSON object, a message template that is not one JSON value, a path or namespace without its leading `/`, or a raw WebSocket setting (`join`, a binary stamp) in a Socket.IO scenario.";
    Sse = "E050", "sse", Error, "An SSE setting the protocol cannot carry: a stream or publish URL that is not http:// or https://, a header name that is not an HTTP token, or a WebSocket setting (`join`, `ping`, a binary stamp) in an SSE scenario.";
    UnusedVariable = "W001", "unused-variable", Warning, "A variable nothing uses.";
    UnsourcedPrice = "W002", "unsourced-price", Warning, "A price-table entry without a sourced price, so it cannot be costed.";
    SingleRepeat = "W003", "single-repeat", Warning, "A phase with one repeat: its points get no spread, so noise cannot be told from effect.";
    PlanWithoutUnits = "W004", "plan-without-units", Warning, "A plan without `[capacity] units`: instances can be priced, but not per unit.";
    LineNotPriced = "W006", "line-not-priced", Warning, "A monthly line the provider's prices do not have (EBS or egress on Hetzner): it is left out of the all-in cost.";
    UnusedTls = "W007", "unused-tls", Warning, "`ca` or `insecure_skip_verify` in a spec with no `https://` or `wss://` URL: it would do nothing.";
    UnusedData = "W009", "unused-data", Warning, "A scenario's `data` file that no `{row.column}` of its requests reads: it would fill nothing.";
    MissingStepFolder = "W010", "missing-step-folder", Warning, "A setup or teardown step's working directory that is not on this machine: an earlier step may make it, so it is not refused.";
    ClosedModelSearch = "N001", "closed-model-search", Note, "A search of a closed model's virtual users: a closed model hides overload (users held by a slow server send less), so a probe whose users send under 90 % of their pace fails as \"users stuck\"; an open model's rate finds the rate a server holds directly.";
    UncheckedCertificates = "W008", "unchecked-certificates", Warning, "`insecure_skip_verify = true`: the server's certificate is not checked, so the run proves nothing about it.";
}

/// One problem in a spec, located by its JSON pointer and its byte span in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The stable code (`E012`).
    pub code: Code,
    /// What is wrong, in plain words.
    pub message: String,
    /// Where, as a JSON pointer into the spec (`/phase/0/hold`); `""` for the whole file.
    pub pointer: String,
    /// Where, in bytes of the source. `None` when the place has no text (a missing table).
    pub span: Option<Range<usize>>,
    /// A short text under the caret.
    pub label: Option<String>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with no place yet.
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: bounded(message.into()),
            pointer: String::new(),
            span: None,
            label: None,
            hint: None,
        }
    }

    /// Its code's severity.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// Places it at a JSON pointer and, when known, the byte span of the spec it points at.
    pub fn at(mut self, pointer: impl Into<String>, span: Option<Range<usize>>) -> Diagnostic {
        self.pointer = pointer.into();
        self.span = span;
        self
    }

    /// The label under the caret.
    pub fn label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(bounded(label.into()));
        self
    }

    /// The fix, as `= help:` says it.
    pub fn hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(bounded(hint.into()));
        self
    }

    /// The fix, when there is one.
    pub fn maybe_hint(mut self, hint: Option<String>) -> Diagnostic {
        self.hint = hint.map(bounded);
        self
    }
}

/// The most characters of the spec one quote of a diagnostic repeats (`unknown key `…``).
const MOST_QUOTED: usize = 64;

/// A diagnostic's text with each quote of the spec (between backticks) longer than
/// [`MOST_QUOTED`] characters cut in its middle and its length said: a 60 MB key is quoted
/// as its first and last characters, not 60 MB.
fn bounded(text: String) -> String {
    if text.len() <= MOST_QUOTED {
        return text;
    }
    let pieces: Vec<&str> = text.split('`').collect();
    if pieces
        .iter()
        .skip(1)
        .step_by(2)
        .all(|q| q.len() <= MOST_QUOTED)
    {
        return text;
    }
    let mut out = String::new();
    for (index, piece) in pieces.iter().enumerate() {
        if index > 0 {
            out.push('`');
        }
        let chars = piece.chars().count();
        if index % 2 == 1 && chars > MOST_QUOTED {
            let head: String = piece.chars().take(MOST_QUOTED / 2).collect();
            let tail: String = piece.chars().skip(chars - MOST_QUOTED / 4).collect();
            out.push_str(&format!("{head}…({} characters)…{tail}", chars));
        } else {
            out.push_str(piece);
        }
    }
    out
}

/// A diagnostic as `headroom validate --format json` prints it, one of an array
/// (schemas/diagnostics.schema.json).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DiagnosticJson {
    /// The spec's path, as given.
    pub file: String,
    /// The 1-based line of the place's start; `null` when the place has no text.
    pub line: Option<usize>,
    /// The 1-based column (in characters) of the place's start.
    pub column: Option<usize>,
    /// The 1-based line of the place's end.
    pub end_line: Option<usize>,
    /// The 1-based column of the place's end.
    pub end_column: Option<usize>,
    /// The stable code (`E012`), explained in docs/diagnostics.md.
    pub code: String,
    /// Whether it stops the spec from compiling.
    pub severity: Severity,
    /// What is wrong, in plain words.
    pub message: String,
    /// Where, as a JSON pointer into the spec (`/phase/0/hold`); `""` for the whole file.
    pub pointer: String,
    /// A short text under the caret.
    pub label: Option<String>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl DiagnosticJson {
    /// The diagnostic of the spec at `path`, its place read from `lines`.
    pub fn of(diagnostic: &Diagnostic, path: &str, lines: &LineIndex<'_>) -> DiagnosticJson {
        let start = diagnostic.span.as_ref().map(|s| lines.line_column(s.start));
        let end = diagnostic.span.as_ref().map(|s| lines.line_column(s.end));
        DiagnosticJson {
            file: path.to_owned(),
            line: start.map(|(l, _)| l),
            column: start.map(|(_, c)| c),
            end_line: end.map(|(l, _)| l),
            end_column: end.map(|(_, c)| c),
            code: diagnostic.code.as_str().to_owned(),
            severity: diagnostic.severity(),
            message: diagnostic.message.clone(),
            pointer: diagnostic.pointer.clone(),
            label: diagnostic.label.clone(),
            hint: diagnostic.hint.clone(),
        }
    }
}

/// A 1-based line and column (in characters) of a byte offset. For many offsets into one
/// source, build a [`LineIndex`] once: this scans the source up to the offset.
pub fn line_column(source: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(source).line_column(offset)
}

/// Where each line of a source starts: lines and columns of many diagnostics in one spec in
/// time linear in the spec (60,000 warnings once took minutes, each counting lines afresh).
pub struct LineIndex<'a> {
    source: &'a str,
    /// The byte offset of each line's first character; the first is 0.
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// An index of the source's line starts.
    pub fn new(source: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { source, starts }
    }

    /// The source the lines are of.
    pub fn source(&self) -> &'a str {
        self.source
    }

    /// The 1-based line and column (in characters) of a byte offset.
    pub fn line_column(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(self.source, offset.min(self.source.len()));
        let line = self.starts.partition_point(|&start| start <= offset);
        let start = self.starts[line - 1];
        let column = self.source[start..offset].chars().count() + 1;
        (line, column)
    }

    /// The byte range of the whole lines `range` touches (without the last line's newline),
    /// and the 1-based number of the first: what a snippet needs to show it.
    pub fn lines_of(&self, range: &std::ops::Range<usize>) -> (std::ops::Range<usize>, usize) {
        let (first, _) = self.line_column(range.start);
        let (last, _) = self.line_column(range.end.max(range.start));
        let start = self.starts[first - 1];
        let end = self
            .starts
            .get(last)
            .map_or(self.source.len(), |next| next - 1);
        (start..end.max(start), first)
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_ordered() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "{} twice", code.as_str());
            assert!(seen.insert(code.slug()), "{} twice", code.slug());
        }
    }

    #[test]
    fn the_line_index_agrees_with_counting() {
        let text = "a = 1\nbé = \"x\"\n\nlast";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() + 2 {
            let at = floor_char_boundary(text, offset.min(text.len()));
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
                .chars()
                .count()
                + 1;
            assert_eq!(index.line_column(offset), (line, column), "at {offset}");
        }
        assert_eq!(index.lines_of(&(7..9)), (6..15, 2));
        assert_eq!(index.lines_of(&(2..8)), (0..15, 1));
        assert_eq!(index.lines_of(&(16..18)), (16..21, 3));
        assert_eq!(index.lines_of(&(16..16)), (16..16, 3));
    }

    /// A 60 MB header line once gave a 60 MB diagnostic: quotes of the spec are cut.
    #[test]
    fn a_long_quote_is_cut_in_its_middle() {
        let key = "é".repeat(1_000_000);
        let diagnostic = Diagnostic::new(Code::TomlSyntax, format!("unknown key `{key}` here"))
            .label(format!("`{key}`"))
            .hint("keys are `bench`, `target`");
        let expected = format!(
            "`{}…(1000000 characters)…{}`",
            "é".repeat(32),
            "é".repeat(16)
        );
        assert_eq!(diagnostic.message, format!("unknown key {expected} here"));
        assert_eq!(diagnostic.label.as_deref(), Some(expected.as_str()));
        assert_eq!(
            diagnostic.hint.as_deref(),
            Some("keys are `bench`, `target`")
        );
        let short = format!("unknown key `{}`", "a".repeat(MOST_QUOTED));
        assert_eq!(
            Diagnostic::new(Code::TomlSyntax, short.clone()).message,
            short
        );
    }

    #[test]
    fn line_column_counts_characters() {
        let text = "a = 1\nbé = \"x\"\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        // "bé = " is 6 bytes but 5 characters: the quote is in column 6.
        assert_eq!(line_column(text, 12), (2, 6));
    }
}
