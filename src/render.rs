//! Diagnostics as people read them (rustc style, via annotate-snippets) and as machines read
//! them (JSON).

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use headroom_compiler::{Diagnostic, LineIndex, Severity};

/// One diagnostic rendered like rustc: title, `--> file:line:column`, the line, a caret under
/// the exact value, the label, then `= help:`. The snippet holds only the lines the span
/// touches (annotate-snippets would otherwise scan the whole spec for each diagnostic).
pub fn human(
    diagnostic: &Diagnostic,
    path: &str,
    lines: &LineIndex<'_>,
    renderer: &Renderer,
) -> String {
    let level = match diagnostic.severity() {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Note => Level::NOTE,
    };
    let title = level
        .primary_title(diagnostic.message.as_str())
        .id(diagnostic.code.as_str());
    let mut group = match &diagnostic.span {
        Some(span) => {
            let (window, first_line) = lines.lines_of(span);
            let shifted =
                span.start.saturating_sub(window.start)..span.end.saturating_sub(window.start);
            let mut annotation = AnnotationKind::Primary.span(shifted);
            if let Some(label) = &diagnostic.label {
                annotation = annotation.label(label.as_str());
            }
            title.element(
                Snippet::source(&lines.source()[window])
                    .line_start(first_line)
                    .path(path)
                    .annotation(annotation),
            )
        }
        None => title.element(Origin::path(path)),
    };
    if let Some(hint) = &diagnostic.hint {
        group = group.element(Level::HELP.message(hint.as_str()));
    }
    let report: [Group<'_>; 1] = [group];
    renderer.render(&report).to_string()
}
