//! Properties that hold for any spec: sweeps expand to their product, and a spec generated
//! from arbitrary keys and values never panics the compiler.

use super::*;

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
    "rooms",
    "rate",
    "hold",
    "name",
    "kind",
    "vary",
    "cap",
    "url",
    "send",
    "repeats",
    "protocol",
    "socket_io",
    "joins",
    "namespace",
    "auth",
    "event",
    "sse",
    "publish",
    "publish_headers",
    "headers",
    "reconnect",
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
    "\"socket.io\"",
    "\"chat\"",
    "['[\"join\", \"room-{room}\"]', '{}', '[1]']",
    "'{\"token\": {peer}}'",
    "{ namespace = \"nsp\", path = \"\", auth = '[' }",
    "\"sse\"",
    "{ publish = \"ftp://x/{room}\", headers = { \"a b\" = \"\\n\" }, reconnect = 1 }",
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
        which in 0usize..5,
        edits in prop::collection::vec((0usize..200, 0usize..4, 0usize..VALUES.len()), 1..6),
    ) {
        let source = example(["relay", "chat", "notes-api", "pad", "socketio-chat"][which]);
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
