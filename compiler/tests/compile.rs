//! The compiler from its API: the examples, and properties that hold for any spec.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use headroom_compiler::{Code, Compilation, Compiler, Severity};
use headroom_prices::PriceTable;
use headroom_spec::target::{ProcessMode, StepScope};
use proptest::prelude::*;

fn compiler() -> &'static (Compiler, PriceTable) {
    static COMPILER: OnceLock<(Compiler, PriceTable)> = OnceLock::new();
    COMPILER.get_or_init(|| {
        (
            Compiler::new(),
            PriceTable::embedded().expect("price table"),
        )
    })
}

fn compile(source: &str) -> Compilation {
    let (compiler, prices) = compiler();
    compiler.compile(source, prices)
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../examples/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("example")
}

/// Each diagnostic's code and where it points, in the order reported.
fn codes_at(compilation: &Compilation) -> Vec<(&'static str, &str)> {
    compilation
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.pointer.as_str()))
        .collect()
}

fn codes(compilation: &Compilation) -> BTreeSet<&'static str> {
    compilation
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect()
}

#[test]
fn the_examples_compile_to_their_matrices() {
    // (example, points, runs, estimated wall time). A run is ramps + hold + settle (3s) +
    // two more scrapes (0.8s) + cool-down: relay 6×3×20.8s + 2×(4×3×30.8s) = 1,113.6s;
    // chat 72×165.8s; notes-api 21×165.8s; pad 30×48.8s.
    let expected = [
        ("relay", 14, 42, "1113600ms"),
        ("chat", 24, 72, "11937600ms"),
        ("notes-api", 7, 21, "3481800ms"),
        ("pad", 10, 30, "1464s"),
    ];
    for (name, points, runs, estimated) in expected {
        let compilation = compile(&example(name));
        let warned: Vec<Code> = compilation.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(warned, [], "{name}: {:?}", compilation.diagnostics);
        let plan = compilation.matrix.expect("plan");
        let total: usize = plan.phases.iter().map(|p| p.points.len()).sum();
        assert_eq!(total, points, "{name} points");
        assert_eq!(plan.runs.len(), runs, "{name} runs");
        assert_eq!(plan.estimated.to_string(), estimated, "{name} estimate");
    }
}

#[test]
fn relay_points_carry_their_values() {
    let plan = compile(&example("relay")).matrix.expect("plan");
    let rooms_phase = &plan.phases[2];
    assert_eq!(rooms_phase.name, "rooms");
    let rooms: Vec<String> = rooms_phase
        .points
        .iter()
        .map(|p| p.vars["rooms"].to_string())
        .collect();
    assert_eq!(rooms, ["16", "32", "64", "128"]);
    // `set` applies to every point of its phase.
    assert!(
        rooms_phase
            .points
            .iter()
            .all(|p| p.vars["edit_rate"].to_string() == "0.45/s")
    );
    // The SLO thresholds are parsed into result units: 2500ms is 2.5 s, 100% is 1.
    let delivery = plan
        .slo
        .iter()
        .find(|r| r.name == "delivery")
        .expect("delivery slo");
    assert_eq!(delivery.threshold_value, 2.5);
    let reach = plan
        .slo
        .iter()
        .find(|r| r.name == "reach")
        .expect("reach slo");
    assert_eq!(reach.threshold_value, 1.0);
    // Runs go phase by phase, and in a phase in rounds (interleaved): every point once, then
    // every point again.
    let first = &plan.phases[0];
    let points = first.points.len();
    assert!(points > 1 && first.repeats > 1, "{first:?}");
    let at = |i: usize| {
        (
            plan.runs[i].phase.as_str(),
            plan.runs[i].point,
            plan.runs[i].repeat,
        )
    };
    assert_eq!(at(0), (first.name.as_str(), 0, 1));
    assert_eq!(at(1), (first.name.as_str(), 1, 1));
    assert_eq!(at(points), (first.name.as_str(), 0, 2));
    assert_eq!(at(points * 2 + 1), (first.name.as_str(), 1, 3));
    // `order = "grouped"`: every repeat of a point before the next.
    let grouped =
        compile(&example("relay").replace("[[phase]]\n", "[[phase]]\norder = \"grouped\"\n"));
    let plan = grouped.matrix.expect("the grouped relay compiles");
    let at = |i: usize| (plan.runs[i].point, plan.runs[i].repeat);
    assert_eq!(
        (at(0), at(1), at(first.repeats as usize)),
        ((0, 1), (0, 2), (1, 1))
    );
}

#[test]
fn a_rate_that_rounds_to_zero_is_blamed_on_the_phase_value() {
    let source = example("relay").replace(
        r#"vary = { edit_rate = ["0.25/s", "1/s", "4/s", "16/s"] }"#,
        r#"vary = { edit_rate = ["0.01/s", "1/s"] }"#,
    );
    let compilation = compile(&source);
    let zero: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::RateRoundsToZero)
        .collect();
    assert_eq!(zero.len(), 1, "{:?}", compilation.diagnostics);
    assert_eq!(zero[0].pointer, "/phase/1/vary/edit_rate/0");
    let span = zero[0].span.clone().expect("span");
    assert_eq!(&source[span], "\"0.01/s\"");
    assert!(
        zero[0].message.contains("0.20 messages"),
        "{}",
        zero[0].message
    );
}

/// Issue 17: a request's name is a segment of its figures' names (`browse.list.latency.p95`):
/// a dot in it is refused with the reason, and two requests of one scenario may not share one.
#[test]
fn request_names_are_segments_and_unique_in_their_scenario() {
    let dotted =
        compile(&example("notes-api").replace(r#"name = "search""#, r#"name = "by.query""#));
    let bad: Vec<_> = dotted
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::BadName)
        .collect();
    assert_eq!(bad.len(), 1, "{:?}", dotted.diagnostics);
    assert_eq!(bad[0].pointer, "/scenario/0/requests/2/name");
    assert_eq!(bad[0].message, "\"by.query\" is not a valid request name");
    assert!(
        bad[0]
            .hint
            .as_deref()
            .is_some_and(|h| h.contains("no dot") || h.contains("a dot would split"))
    );
    let twice = compile(&example("notes-api").replace(r#"name = "page""#, r#"name = "list""#));
    let duplicate: Vec<_> = twice
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::DuplicateName)
        .collect();
    assert_eq!(duplicate.len(), 1, "{:?}", twice.diagnostics);
    assert_eq!(duplicate[0].pointer, "/scenario/0/requests/1/name");
    assert_eq!(
        duplicate[0].message,
        "two requests of `browse` are named `list`"
    );
}

/// Issue 17: the checks of an answer are checked before anything runs: a regex that does not
/// compile, a JSON pointer that does not start at the root.
#[test]
fn answer_checks_that_cannot_work_are_refused() {
    let source = example("notes-api").replace(
        r#"q=budget", expect = 200"#,
        r#"q=budget", expect = { body_regex = "(unclosed", json = { "title" = "x" } }"#,
    );
    let compilation = compile(&source);
    let found: Vec<(Code, &str, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code, d.pointer.as_str(), d.message.as_str()))
        .collect();
    assert!(
        found
            .iter()
            .any(|(code, pointer, message)| *code == Code::BadPattern
                && *pointer == "/scenario/0/requests/2/expect/body_regex"
                && message.starts_with("`body_regex` is not a regular expression")),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            Code::WrongType,
            "/scenario/0/requests/2/expect/json/title",
            "`title` is not a JSON pointer"
        )),
        "{found:?}"
    );
}

#[test]
fn schema_errors_are_all_reported_at_once() {
    let source = example("pad")
        .replace(r#"cooldown = "5s""#, "cooldown = 5")
        .replace(r#"on_failure = "stop""#, r#"on_failure = "halt""#)
        .replace("rooms = 1\n", "rooms = 1\nromms = 2\n");
    let compilation = compile(&source);
    assert_eq!(
        codes(&compilation),
        BTreeSet::from(["E002", "E006", "E010"])
    );
    assert!(compilation.matrix.is_none());
}

#[test]
fn semantic_problems_are_reported_with_schema_errors() {
    let source = example("relay")
        .replace(r#""--port", "{port}""#, r#""--port", "{prot}""#)
        .replace("deadline = \"30s\"", "deadline = 30")
        .replace("[plan]\n", "[plan]\nregoin = \"us-east-1\"\n")
        .replace(
            r#"instances = ["t4g.medium", "t4g.large"]"#,
            r#"instances = ["t4g.meduim"]"#,
        );
    let compilation = compile(&source);
    // E006 and E002 from the schema; E012 from the checks, which still ran. The unknown
    // instance sits in the table of the unknown key, so it is held back rather than guessed.
    assert_eq!(
        codes(&compilation),
        BTreeSet::from(["E002", "E006", "E012"])
    );
}

#[test]
fn checks_that_a_removed_value_could_mislead_are_held_back() {
    // Without `rate` (a bare number) the executor would look rate-less: E022 must not appear.
    let source = example("notes-api").replace(
        "executor = \"ramping-vus\"\nvus = \"{writers}\"",
        "executor = \"constant-arrival-rate\"\nrate = 5",
    );
    let compilation = compile(&source);
    let found = codes(&compilation);
    assert!(found.contains("E008"), "{found:?}");
    assert!(!found.contains("E022"), "{found:?}");
}

/// A spec with the given axes (each a list of values), every variable used in a URL.
fn spec_with_axes(axes: &[Vec<u32>], repeats: u32) -> String {
    let names: Vec<String> = (0..axes.len()).map(|i| format!("v{i}")).collect();
    let vars: String = names.iter().map(|n| format!("{n} = 1\n")).collect();
    let query: String = names.iter().map(|n| format!("&{n}={{{n}}}")).collect();
    let vary: Vec<String> = names
        .iter()
        .zip(axes)
        .map(|(n, values)| {
            let list: Vec<String> = values.iter().map(u32::to_string).collect();
            format!("{n} = [{}]", list.join(", "))
        })
        .collect();
    format!(
        r#"[bench]
name = "prop"

[vars]
{vars}
[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "load"
kind = "http"
executor = "constant-arrival-rate"
rate = "10/s"
requests = [{{ url = "http://127.0.0.1:{{port}}/?x=1{query}" }}]

[[phase]]
name = "sweep"
hold = "10s"
repeats = {repeats}
vary = {{ {} }}
"#,
        vary.join(", ")
    )
}

const KEYS: &[&str] = &[
    "rooms", "rate", "hold", "name", "kind", "vary", "cap", "url", "send", "repeats",
];
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1e400",
    "\"\"",
    "\"{rooms}\"",
    "\"{\"",
    "\"0/s\"",
    "\"1/h\"",
    "[]",
    "{}",
    "{ from = 10, to = 1, factor = 2 }",
    "{ from = 1, to = 1000000000, step = 0.0001 }",
    "\"9999999999999999999d\"",
    "true",
    "[1, \"a\", 2.5]",
    "\"ws://10.0.0.1/{room}\"",
    "{ rate = \"{nope}\" }",
    "nan",
    "inf",
    "1979-05-27T07:32:00Z",
    "\"browse.latency.p95 <\"",
];

fn toml_value() -> impl Strategy<Value = toml::Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(toml::Value::Integer),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(toml::Value::Float),
        any::<bool>().prop_map(toml::Value::Boolean),
        "[a-z{}0-9/%. ]{0,12}".prop_map(toml::Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(toml::Value::Array),
            prop::collection::btree_map(key(), inner, 0..5)
                .prop_map(|m| toml::Value::Table(m.into_iter().collect())),
        ]
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "bench",
            "name",
            "target",
            "command",
            "scenario",
            "phase",
            "kind",
            "rooms",
            "vary",
            "slo",
            "plan",
            "instances",
            "vars",
            "hold",
            "rate",
            "executor",
            "requests",
            "url",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{1,8}",
    ]
}

fn toml_table() -> impl Strategy<Value = toml::Table> {
    prop::collection::btree_map(key(), toml_value(), 0..6).prop_map(|m| m.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn matrix_size_is_the_product_of_the_axes_times_repeats(
        axes in prop::collection::vec(prop::collection::vec(1u32..1000, 1..6), 1..4),
        repeats in 2u32..6,
    ) {
        let compilation = compile(&spec_with_axes(&axes, repeats));
        let plan = compilation.matrix.expect("plan");
        let product: usize = axes.iter().map(Vec::len).product();
        prop_assert_eq!(plan.phases[0].points.len(), product);
        prop_assert_eq!(plan.runs.len(), product * repeats as usize);
        // Every combination of positions appears once, the last axis fastest.
        for (index, point) in plan.phases[0].points.iter().enumerate() {
            let mut rest = index;
            for (axis, values) in axes.iter().enumerate().rev() {
                let position = rest % values.len();
                rest /= values.len();
                prop_assert_eq!(point.at[&format!("v{axis}")].to_string(), values[position].to_string());
            }
        }
    }

    #[test]
    fn a_linear_range_has_the_expected_length(from in 1i64..1000, steps in 0i64..50, step in 1i64..100) {
        let to = from + steps * step;
        let source = spec_with_axes(&[vec![1]], 3)
            .replace("v0 = [1]", &format!("v0 = {{ from = {from}, to = {to}, step = {step} }}"));
        let plan = compile(&source).matrix.expect("plan");
        prop_assert_eq!(plan.phases[0].points.len() as i64, steps + 1);
        prop_assert_eq!(
            plan.phases[0].points.last().map(|p| p.at["v0"].to_string()),
            Some(to.to_string())
        );
    }

    /// What a spec writes comes back out of the resolved plan, value for value.
    #[test]
    fn every_written_value_survives_into_the_plan(
        name in "[a-z][a-z0-9-]{0,20}",
        description in "[ -~&&[^\"\\\\]]{0,40}",
        // Within what one run may open (MAX_SOCKETS_PER_RUN): 3,000 rooms × 64 peers.
        rooms in prop::collection::vec(1u64..3_000, 1..6),
        rate_hundredths in 1u32..100_000,
        hold_s in 1u64..600,
        peers in 1u64..64,
        reserve_mib in 1u64..65_536,
        cap in 1u64..100_000,
        threshold_ms in 1u64..60_000,
    ) {
        let rate = format!("{}/s", rate_hundredths as f64 / 100.0);
        let rooms_list: Vec<String> = rooms.iter().map(u64::to_string).collect();
        let source = format!(
            r#"[bench]
name = "{name}"
description = "{description}"
unit = "room"

[vars]
rooms = 1

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "edits"
kind = "rooms"
url = "ws://127.0.0.1:{{port}}/rooms/{{room}}"
rooms = "{{rooms}}"
peers_per_room = {peers}
send = {{ rate = "{rate}", per = "scenario" }}

[[phase]]
name = "memory"
vary = {{ rooms = [{}] }}
hold = "{hold_s}s"

[slo]
delivery = "edits.seen_by_all.p95 < {threshold_ms}ms"

[capacity]
units = "rooms"
cap = {cap}
reserve = "{reserve_mib}MiB"
"#,
            rooms_list.join(", ")
        );
        let compilation = compile(&source);
        let errors: Vec<_> = compilation.diagnostics.iter().filter(|d| d.severity() == Severity::Error).collect();
        // The only error such a spec may get: a rate too low to send anything in its hold
        // (E023), which is skipped here as it is not this property.
        prop_assert!(errors.iter().all(|d| d.code == Code::RateRoundsToZero), "{:?}", errors);
        prop_assume!(errors.is_empty());
        let plan = compilation.matrix.expect("plan");
        let json = serde_json::to_value(&plan).expect("plan json");
        prop_assert_eq!(&json["bench"]["name"], name.as_str());
        prop_assert_eq!(&json["bench"]["description"], description.as_str());
        prop_assert_eq!(json["capacity"]["cap"].as_u64(), Some(cap));
        let reserve: headroom_spec::Size =
            json["capacity"]["reserve"].as_str().expect("reserve").parse().expect("size");
        prop_assert_eq!(reserve.bytes(), reserve_mib << 20);
        let points = json["phases"][0]["points"].as_array().expect("points");
        prop_assert_eq!(points.len(), rooms.len());
        for (point, written) in points.iter().zip(&rooms) {
            let scenario = &point["scenarios"][0];
            prop_assert_eq!(scenario["rooms"].as_u64(), Some(*written));
            prop_assert_eq!(scenario["peers_per_room"].as_u64(), Some(peers));
            let sent: headroom_spec::Rate =
                scenario["send"]["rate"].as_str().expect("rate").parse().expect("rate");
            prop_assert!((sent.as_per_second() - rate_hundredths as f64 / 100.0).abs() < 1e-9);
            let hold: headroom_spec::Duration =
                scenario["stages"]["hold"].as_str().expect("hold").parse().expect("duration");
            prop_assert_eq!(hold.as_micros(), hold_s * 1_000_000);
        }
        prop_assert!((plan.slo[0].threshold_value - threshold_ms as f64 / 1000.0).abs() < 1e-9);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let text = String::from_utf8_lossy(&bytes);
        let compilation = compile(&text);
        for diagnostic in &compilation.diagnostics {
            if let Some(span) = &diagnostic.span {
                prop_assert!(span.end <= text.len());
            }
        }
    }

    /// An example with random lines dropped, repeated or rewritten: TOML that is nearly a spec,
    /// which reaches the deep checks that random bytes never do.
    #[test]
    fn mutated_examples_never_panic(
        which in 0usize..4,
        edits in prop::collection::vec((0usize..200, 0usize..4, 0usize..VALUES.len()), 1..6),
    ) {
        let source = example(["relay", "chat", "notes-api", "pad"][which]);
        let mut lines: Vec<String> = source.lines().map(str::to_owned).collect();
        for (at, how, value) in edits {
            if lines.is_empty() {
                break;
            }
            let at = at % lines.len();
            match how {
                0 => {
                    lines.remove(at);
                }
                1 => {
                    let line = lines[at].clone();
                    lines.insert(at, line);
                }
                2 => {
                    if let Some((key, _)) = lines[at].split_once(" = ") {
                        lines[at] = format!("{key} = {}", VALUES[value]);
                    }
                }
                _ => lines.insert(at, format!("{} = {}", KEYS[value % KEYS.len()], VALUES[value])),
            }
        }
        let text = lines.join("\n");
        let compilation = compile(&text);
        for diagnostic in &compilation.diagnostics {
            if let Some(span) = &diagnostic.span {
                prop_assert!(span.end <= text.len(), "span past the end: {:?}", diagnostic);
            }
        }
        prop_assert_eq!(compilation.matrix.is_some(), !compilation.has_errors());
    }

    /// Arbitrary TOML documents (any structure) never panic, and only a spec with a `[bench]`
    /// can compile.
    #[test]
    fn arbitrary_toml_never_panics(value in toml_table()) {
        let text = toml::to_string(&value).unwrap_or_default();
        let compilation = compile(&text);
        if compilation.matrix.is_some() {
            prop_assert!(value.contains_key("bench"));
        }
    }
}

/// A spec's head: a bench, a target (with `target` lines added) and one HTTP scenario swept
/// over `users`; `tail` adds tables.
fn spec_with(target: &str, tail: &str) -> String {
    format!(
        r#"[bench]
name = "keys"
people_per_unit = "{{people}}"

[vars]
users = 10
people = 4

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]
{target}

[[scenario]]
name = "browse"
kind = "http"
executor = "constant-vus"
vus = "{{users}}"
requests = [{{ url = "http://127.0.0.1:{{port}}/" }}]
stages = {{ hold = "10s" }}

[[phase]]
name = "load"
vary = {{ users = [10, 20, 40] }}
repeats = 3

[capacity]
units = "users"
{tail}
"#
    )
}

/// Issue 11, items 8–10: every key that is accepted and not carried out says so at validate:
/// `ready.tcp = false` (E010), a region the
/// table does not price (E037), AWS lines in a Hetzner plan (W006), a budget in dollars for a
/// plan in euros (E021), and a readiness pattern that is not a regex (E036).
#[test]
fn keys_that_would_do_nothing_are_refused_or_warned() {
    let spec = spec_with(
        "ready = { tcp = false }",
        "\n[plan]\nprovider = \"hetzner\"\nregion = \"us-west-2\"\ninstances = [\"CX22\"]\nebs_gb = 40\negress_gb = 100\nbudget_usd_per_month = 50",
    );
    let compilation = compile(&spec);
    let found = codes(&compilation);
    for code in ["E010", "E037", "W006", "E021"] {
        assert!(found.contains(code), "{code} not in {found:?}");
    }
    let lines: Vec<&str> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::LineNotPriced)
        .map(|d| d.pointer.as_str())
        .collect();
    assert_eq!(lines, ["/plan/ebs_gb", "/plan/egress_gb"]);
    let pattern = compile(&spec_with("ready = { log = \"listening (on\" }", ""));
    assert_eq!(codes(&pattern), BTreeSet::from(["E036"]));
}

/// Names that figures, files and `--phase` are made of are checked like variables': a
/// scenario with a dot in its name would split its figures (`my.api.latency.p95` reads as the
/// scenario `my`), an empty one would leave `.latency.p95`; a phase or series named with
/// spaces or capitals is refused too (E032), each at its name, in one report, in the order they are written.
#[test]
fn scenario_phase_and_series_names_are_checked() {
    let spec = spec_with(
        "",
        "\n[measure]\nseries = [{ name = \"Pg-Connections\", metric = \"pg\" }]",
    )
    .replace("name = \"browse\"", "name = \"my.api\"")
    .replace("name = \"load\"", "name = \"Load Test\"");
    let compilation = compile(&spec);
    let found = codes_at(&compilation);
    assert_eq!(
        found,
        [
            ("E032", "/scenario/0/name"),
            ("E032", "/phase/0/name"),
            ("E032", "/measure/series/0/name"),
        ],
        "{:?}",
        compilation.diagnostics
    );
    let messages: Vec<&str> = compilation
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "\"my.api\" is not a valid scenario name",
            "\"Load Test\" is not a valid phase name",
            "\"Pg-Connections\" is not a valid series name",
        ]
    );
}

/// `process = "per-phase"` keeps one target for a phase: accepted when every point would
/// start the same target, refused (E045) where a swept variable reaches the target or a step
/// run once a phase, at the key it reaches; a step run once a phase needs such a target.
#[test]
fn one_target_a_phase_is_kept_only_when_its_points_agree() {
    let once = "[[target.setup]]\nname = \"sign-up\"\ncommand = [\"true\"]\nper = \"phase\"";
    let kept = compile(&spec_with(&format!("process = \"per-phase\"\n{once}"), ""));
    assert!(kept.diagnostics.is_empty(), "{:?}", kept.diagnostics);
    let matrix = kept.matrix.expect("a plan");
    assert_eq!(matrix.phases[0].process, ProcessMode::PerPhase);
    assert_eq!(
        matrix.phases[0].points[2].target.setup[0].per,
        StepScope::Phase
    );

    // `users` is swept into the command and into the step run once a phase.
    let swept = spec_with(
        "process = \"per-phase\"\nenv = { USERS = \"{users}\" }\n[[target.setup]]\nname = \"sign-up\"\ncommand = [\"sign-up\", \"{users}\"]\nper = \"phase\"\n[[target.setup]]\nname = \"warm\"\ncommand = [\"warm\", \"{users}\"]",
        "",
    );
    let refused = compile(&swept);
    assert!(refused.matrix.is_none());
    let found = codes_at(&refused);
    assert_eq!(
        found,
        [
            ("E045", "/target/env/USERS"),
            ("E045", "/target/setup/0/command/1")
        ],
        "the step at every point may vary: {:?}",
        refused.diagnostics
    );
    let message = &refused.diagnostics[0].message;
    assert!(
        message.contains("phase `load`") && message.contains("`env`"),
        "{message}"
    );
    assert_eq!(
        refused.diagnostics[0].label.as_deref(),
        Some("not the same at users = 10 and at users = 20")
    );

    // Once a phase, with a fresh target per point: no target lives for the phase.
    let orphan = compile(&spec_with(once, ""));
    let found = codes_at(&orphan);
    assert_eq!(found, [("E045", "/target/setup/0/per")]);
}

/// `people_per_unit = "{people}"` takes the variable's value: the plan carries 4, not a
/// variable every reader would read as 1. A variable a phase varies is refused.
#[test]
fn people_per_unit_takes_its_variables_value() {
    let compilation = compile(&spec_with("", "\n[plan]\ninstances = [\"t4g.medium\"]"));
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let plan = compilation.matrix.expect("a plan");
    assert_eq!(plan.bench.people_per_unit, 4);
    let swept = spec_with("", "\n[plan]\ninstances = [\"t4g.medium\"]").replace(
        "people_per_unit = \"{people}\"",
        "people_per_unit = \"{users}\"",
    );
    let compilation = compile(&swept);
    assert!(
        compilation
            .diagnostics
            .iter()
            .any(|d| d.code == Code::ConflictingSettings && d.pointer == "/bench/people_per_unit"),
        "{:?}",
        compilation.diagnostics
    );
}

/// Issue 11, item 13: the units variable may start at 0 (the baseline point, no load) and may
/// be a rate ("how many requests per second one box answers"). 0 stays refused for a count
/// that is not the units.
#[test]
fn units_may_be_a_rate_and_start_at_zero() {
    let baseline = spec_with("", "").replace("users = [10, 20, 40]", "users = [0, 10, 20]");
    let compilation = compile(&baseline);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let plan = compilation.matrix.expect("a plan");
    assert_eq!(plan.phases[0].points.len(), 3);
    let not_units = baseline.replace("units = \"users\"", "");
    assert!(codes(&compile(&not_units)).contains("E026"));
    let rate = r#"[bench]
name = "rate"
unit = "req/s"

[vars]
rate = "100/s"

[target]
command = ["{headroom}", "demo-target", "--port", "{port}"]

[[scenario]]
name = "api"
kind = "http"
executor = "constant-arrival-rate"
rate = "{rate}"
requests = [{ url = "http://127.0.0.1:{port}/" }]

[[phase]]
name = "rate"
vary = { rate = ["100/s", "400/s", "1600/s"] }
hold = "10s"

[capacity]
units = "rate"
"#;
    let compilation = compile(rate);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
}

/// Issue 12: `[capacity] headroom` of 100 % or more leaves nothing to plan with.
#[test]
fn a_headroom_of_all_the_ceiling_is_refused() {
    let spec = spec_with("", "headroom = \"150%\"");
    let compilation = compile(&spec);
    let found: Vec<_> = compilation
        .diagnostics
        .iter()
        .filter(|d| d.pointer == "/capacity/headroom")
        .collect();
    assert_eq!(found.len(), 1, "{:?}", compilation.diagnostics);
    assert_eq!(found[0].code, Code::OutOfRange);
    assert!(
        compile(&spec_with("", "headroom = \"25%\""))
            .diagnostics
            .is_empty()
    );
}

/// Issue 12, bounded by construction: a rate of 10¹²/s, ten million peers, a 1 GiB message and
/// a 10,000 × 1,000 product of ranges are refused at validate (E038); the product is counted
/// before anything is expanded.
#[test]
fn what_no_machine_should_run_is_refused_before_expanding() {
    let rooms = |extra: &str| {
        format!(
            r#"[bench]
name = "big"

[target]
command = ["{{headroom}}", "demo-target", "--port", "{{port}}"]

[[scenario]]
name = "chat"
kind = "rooms"
url = "ws://127.0.0.1:{{port}}/rooms/{{room}}"
{extra}

[[phase]]
name = "load"
hold = "10s"
"#
        )
    };
    let found = |source: &str| -> Vec<String> {
        compile(source)
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::TooLarge)
            .map(|d| d.message.clone())
            .collect()
    };
    let peers = found(&rooms("rooms = 10\npeers_per_room = 1000000\nidle = true"));
    assert_eq!(
        peers,
        ["scenario `chat` opens 10,000,000 sockets in one run: at most 200,000"]
    );
    let size = found(&rooms(
        "rooms = 1\npeers_per_room = 2\nsend = { rate = \"1/s\", per = \"room\", size = \"1GiB\" }",
    ));
    assert_eq!(
        size,
        ["scenario `chat` sends messages of 1GiB: at most 16MiB"]
    );
    let rate = found(
        &std::fs::read_to_string(format!(
            "{}/../tests/fixtures/diagnostics/E038-too-large.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("fixture"),
    );
    assert_eq!(rate.len(), 1, "{rate:?}");
    assert_eq!(
        rate,
        [
            "scenario `browse` at 1000000000000/s plans 2,000,000,000,000 requests in one run: at most 50,000,000"
        ]
    );
    let product = spec_with("env = { X = \"{x}\" }", "")
        .replace("[vars]\nusers = 10", "[vars]\nusers = 10\nx = 1")
        .replace(
            "vary = { users = [10, 20, 40] }",
            "vary = { users = { from = 1, to = 10000, step = 1 }, x = { from = 1, to = 1000, step = 1 } }",
        );
    let product = found(&product);
    assert_eq!(
        product,
        ["phase `load` has 10,000,000 points (10,000 `users` × 1,000 `x`): at most 10,000 can run"]
    );
}

/// Issue 12, unclear errors: a 0 s hold is blamed on the hold (not on the rate), and a 0 s
/// ready timeout is refused at validate, not found at run time.
#[test]
fn zero_holds_and_zero_timeouts_are_blamed_where_they_are() {
    let spec =
        spec_with("", "").replace("stages = { hold = \"10s\" }", "stages = { hold = \"0s\" }");
    let compilation = compile(&spec);
    let found: Vec<(Code, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code, d.pointer.as_str()))
        .collect();
    assert!(
        found.contains(&(Code::OutOfRange, "/scenario/0/stages/hold")),
        "{found:?}"
    );
    assert!(
        !found
            .iter()
            .any(|(code, _)| *code == Code::RateRoundsToZero),
        "{found:?}"
    );
    let timeout = compile(&spec_with(
        "ready = { http = \"/healthz\", timeout = \"0s\" }",
        "",
    ));
    assert!(
        timeout
            .diagnostics
            .iter()
            .any(|d| d.code == Code::OutOfRange && d.pointer == "/target/ready/timeout"),
        "{:?}",
        timeout.diagnostics
    );
}

/// The run matrix is part of the results contract: what `compile --json` and the results
/// file write reads back into the same plan, for every example.
#[test]
fn the_resolved_plan_reads_back_as_written() {
    for name in ["relay", "chat", "notes-api", "pad"] {
        let plan = compile(&example(name))
            .matrix
            .unwrap_or_else(|| panic!("{name} compiles"));
        let written = serde_json::to_value(&plan).expect("serialises");
        let read: headroom_compiler::RunMatrix =
            serde_json::from_value(written.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            serde_json::to_value(&read).expect("serialises"),
            written,
            "{name}"
        );
    }
}

/// `cpu_target` is a share of the vCPUs: 0 % or over 100 % is refused where it is written.
#[test]
fn a_cpu_target_outside_its_share_is_refused() {
    for written in ["0%", "120%"] {
        let source = example("relay").replace(
            "[capacity]\n",
            &format!("[capacity]\ncpu_target = \"{written}\"\n"),
        );
        let compilation = compile(&source);
        let found = compilation
            .diagnostics
            .iter()
            .find(|d| d.pointer == "/capacity/cpu_target")
            .unwrap_or_else(|| panic!("{written}: {:?}", compilation.diagnostics));
        assert_eq!(found.code.as_str(), "E005", "{found:?}");
        assert!(found.message.contains(written), "{}", found.message);
    }
    let source = example("relay").replace("[capacity]\n", "[capacity]\ncpu_target = \"50%\"\n");
    let matrix = compile(&source).matrix.expect("a matrix");
    assert_eq!(matrix.capacity.cpu_target.fraction(), 0.5);
}

/// Issue 14: `[target] limits` no instance has (no CPU, a few MiB) are refused where they are
/// written, at the point they take that value; sound ones, pinned, compile clean.
#[test]
fn limits_no_instance_has_are_refused() {
    let refused = compile(&spec_with("limits = { cpus = 1, memory = \"1MiB\" }", ""));
    assert_eq!(refused.diagnostics.len(), 1, "{:?}", refused.diagnostics);
    let memory = refused
        .diagnostics
        .iter()
        .find(|d| d.pointer == "/target/limits/memory")
        .expect("the memory refused");
    assert_eq!(memory.code, Code::OutOfRange);
    assert!(
        memory
            .message
            .starts_with("`memory = \"1MiB\"` is less than a server starts in: at least 16MiB"),
        "{}",
        memory.message
    );
    let zero = compile(&spec_with("limits = { cpus = 0.001 }", ""));
    let cpus = zero
        .diagnostics
        .iter()
        .find(|d| d.pointer == "/target/limits/cpus")
        .expect("the quota refused");
    assert_eq!(
        cpus.message,
        "`cpus = 0.001` is not a CPU quota: 0.01 to 1024 CPUs (at users = 10)"
    );
    let sound = compile(&spec_with(
        "limits = { cpus = 0.5, memory = \"512MiB\", pin = true }",
        "",
    ));
    assert!(sound.diagnostics.is_empty(), "{:?}", sound.diagnostics);
}

/// Issue 14: `[plan] emulate` runs the ceiling phase once more per priced instance, each point
/// held to the instance's vCPUs and memory less the reserve; a burstable instance at its
/// baseline too. It needs a ceiling phase and a target headroom starts.
#[test]
fn emulate_runs_the_ceiling_phase_in_each_instances_shape() {
    let spec = spec_with(
        "",
        "ceiling_phase = \"load\"\nreserve = \"512MiB\"\n\n[plan]\ninstances = [\"c7g.medium\", \"t4g.small\"]\nemulate = true",
    );
    let compilation = compile(&spec);
    assert!(
        compilation.diagnostics.is_empty(),
        "{:?}",
        compilation.diagnostics
    );
    let matrix = compilation.matrix.expect("a matrix");
    let names: Vec<&str> = matrix.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "load",
            "load@c7g.medium",
            "load@t4g.small",
            "load@t4g.small-baseline"
        ]
    );
    let shape = |name: &str| {
        let phase = matrix
            .phases
            .iter()
            .find(|p| p.name == name)
            .expect("the phase");
        let emulated = phase.emulates.as_ref().expect("emulated");
        let limits = phase.points[0].target.limits.as_ref().expect("limits");
        assert_eq!(limits.cpus, Some(emulated.cpus));
        assert_eq!(limits.memory, Some(emulated.memory));
        assert_eq!(phase.points.len(), 3);
        (
            emulated.cpus,
            emulated.memory.to_string(),
            emulated.baseline,
        )
    };
    assert_eq!(shape("load@c7g.medium"), (1.0, "1536MiB".to_owned(), false));
    assert_eq!(shape("load@t4g.small"), (2.0, "1536MiB".to_owned(), false));
    // t4g.small sustains 20 % of each of its 2 vCPUs.
    assert_eq!(
        shape("load@t4g.small-baseline"),
        (0.4, "1536MiB".to_owned(), true)
    );
    // Three repeats of three points in each of four phases.
    assert_eq!(matrix.runs.len(), 36);
    let total: u64 = matrix.phases.iter().map(|p| p.estimated.as_micros()).sum();
    assert_eq!(matrix.estimated.as_micros(), total);

    let without = compile(&spec_with(
        "",
        "\n[plan]\ninstances = [\"c7g.medium\"]\nemulate = true",
    ));
    let missing = without
        .diagnostics
        .iter()
        .find(|d| d.pointer == "/plan/emulate")
        .expect("refused");
    assert_eq!(missing.code, Code::MissingSetting);
}

/// A stack compiles to its services in start order, each point's steps with its variables
/// filled; `{port}` and `{port.NAME}` are left for the runner.
#[test]
fn a_stack_starts_in_order_with_its_steps_filled() {
    let compilation = compile(&example("notes-api-postgres"));
    assert_eq!(compilation.diagnostics, []);
    let plan = compilation.matrix.expect("plan");
    let tier = &plan.phases[0];
    let point = &tier.points[2];
    let target = &point.target;
    let names: Vec<&str> = target.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["db", "api"]);
    assert_eq!(target.front.as_deref(), Some("api"));
    assert!(target.is_started());
    let api = &target.services[1];
    assert!(
        api.command.contains(&"--pool".to_owned()) && api.command.contains(&"10".to_owned()),
        "{:?}",
        api.command
    );
    assert!(
        api.command
            .iter()
            .any(|a| a == "postgres://headroom@127.0.0.1:{port.db}/postgres")
    );
    let limits = api.limits.as_ref().expect("api limits");
    assert_eq!(limits.cpus, Some(0.5));
    // The tier's value is in the seed step at this point: 100,000 notes.
    let seed = target.setup[0].command.last().expect("sql");
    assert!(seed.contains("generate_series(1, 100000)"), "{seed}");
    assert_eq!(target.teardown[0].name, "clean-up");
}

/// Each mistake of a stack is named where it was written.
#[test]
fn a_stack_that_cannot_start_is_refused() {
    let source = r#"
[bench]
name = "x"

[target]
ready = { http = "/healthz" }

[target.services.db]
command = ["db", "--port", "{port}"]
after = ["cache"]

[target.services.api]
command = ["api", "--db", "{port.dbb}"]
after = ["api"]

[[target.setup]]
name = "seed"
command = ["seed", "{port.db}"]
timeout = "0s"

[[scenario]]
name = "visit"
kind = "http"
executor = "constant-vus"
vus = 1
requests = [{ url = "http://127.0.0.1:{port.api}/" }]

[measure]
series = [
  { name = "both", metric = "m", command = ["echo", "1"] },
  { name = "neither" },
  { name = "scraped", metric = "m", every = "2s" },
]

[[phase]]
name = "p"
hold = "2s"
repeats = 3
"#;
    let compilation = compile(source);
    let found: Vec<(&str, &str, &str)> = compilation
        .diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.pointer.as_str(), d.message.as_str()))
        .collect();
    let expect = [
        (
            "E044",
            "/target/services/db/after/0",
            "service `db` starts after `cache`, which is no service",
        ),
        (
            "E044",
            "/target/services/api/after/0",
            "service `api` starts after itself",
        ),
        (
            "E012",
            "/target/services/api/command/2",
            "unknown placeholder `{port.dbb}`",
        ),
        (
            "E044",
            "/target/services",
            "a stack of several services and no `front`",
        ),
        (
            "E044",
            "/target/ready",
            "`ready` in [target] has no effect on a stack",
        ),
        (
            "E005",
            "/target/setup/0/timeout",
            "`timeout = \"0s\"` gives the step no time to run",
        ),
        (
            "E012",
            "/scenario/0/requests/0/url",
            "unknown placeholder `{port.api}`",
        ),
        (
            "E021",
            "/measure/series/0/command",
            "series `both` has both `metric` and `command`",
        ),
        (
            "E022",
            "/measure/series/1",
            "series `neither` has neither `metric` nor `command`",
        ),
        (
            "E021",
            "/measure/series/2/every",
            "series `scraped` has `every` and no `command`",
        ),
    ];
    for expected in expect {
        assert!(
            found.contains(&expected),
            "missing {expected:?} in {found:#?}"
        );
    }
    assert!(compilation.matrix.is_none());
}
