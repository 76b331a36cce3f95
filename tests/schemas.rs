//! Every committed JSON Schema matches the types it is generated from. Regenerate them with
//! `UPDATE_SCHEMA=1 cargo test --workspace` (the same variable rewrites the generated docs).

use std::path::Path;

fn generated<T: schemars::JsonSchema>() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

fn check(file: &str, schema: &serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(file);
    let mut text = serde_json::to_string_pretty(schema).expect("schema json");
    text.push('\n');
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &text).expect("write schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "schemas/{file} is stale: run `UPDATE_SCHEMA=1 cargo test --workspace` and commit it"
    );
}

#[test]
fn the_spec_schema_is_current() {
    check("spec.schema.json", &headroom_spec::json_schema());
}

#[test]
fn the_results_schema_is_current() {
    check(
        "results.schema.json",
        &generated::<headroom_runner::results::Results>(),
    );
}

#[test]
fn the_stream_line_schema_is_current() {
    check(
        "stream-line.schema.json",
        &generated::<headroom_runner::results::stream::StreamLine>(),
    );
}

#[test]
fn the_plan_schema_is_current() {
    check(
        "plan.schema.json",
        &generated::<headroom_pricing::plan::PlanReport>(),
    );
}

#[test]
fn the_compare_schema_is_current() {
    check(
        "compare.schema.json",
        &generated::<headroom_compare::report::Report>(),
    );
}

#[test]
fn the_run_matrix_schema_is_current() {
    check(
        "run-matrix.schema.json",
        &generated::<headroom_matrix::RunMatrix>(),
    );
}

#[test]
fn the_diagnostics_schema_is_current() {
    check(
        "diagnostics.schema.json",
        &generated::<Vec<headroom_compiler::DiagnosticJson>>(),
    );
}

#[test]
fn the_fit_schema_is_current() {
    check(
        "fit.schema.json",
        &generated::<headroom_pricing::fit_report::FitReport>(),
    );
}

#[test]
fn the_prices_schema_is_current() {
    check(
        "prices.schema.json",
        &generated::<headroom_pricing::entries::PriceListing>(),
    );
}

#[test]
fn the_page_context_schema_is_current() {
    check(
        "page-context.schema.json",
        &generated::<headroom_templates::PageContext>(),
    );
}

/// Issue 11, item 11: every field of the output contracts says what it is. A field is
/// described by its own `description`, by the described definition it refers to, or (a tag
/// such as `kind`, or an externally tagged variant's key) by its described variant.
#[test]
fn every_field_of_the_output_contracts_is_described() {
    fn described(field: &serde_json::Value, defs: &serde_json::Value) -> bool {
        if field.get("description").is_some() {
            return true;
        }
        let reference = field
            .get("$ref")
            .or_else(|| field.pointer("/allOf/0/$ref"))
            .and_then(serde_json::Value::as_str);
        reference
            .and_then(|r| r.rsplit('/').next())
            .is_some_and(|name| defs[name].get("description").is_some())
    }
    fn walk(node: &serde_json::Value, path: &str, defs: &serde_json::Value, out: &mut Vec<String>) {
        match node {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(properties)) = map.get("properties") {
                    let variant_described = map.get("description").is_some();
                    for (name, field) in properties {
                        let tag = field.get("const").is_some() || properties.len() == 1;
                        if !(described(field, defs) || variant_described && tag) {
                            out.push(format!("{path}.{name}"));
                        }
                    }
                }
                for (key, value) in map {
                    walk(value, &format!("{path}/{key}"), defs, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}[{i}]"), defs, out);
                }
            }
            _ => {}
        }
    }
    for file in [
        "compare.schema.json",
        "plan.schema.json",
        "results.schema.json",
        "page-context.schema.json",
        "stream-line.schema.json",
        "prices.schema.json",
        "fit.schema.json",
        "run-matrix.schema.json",
        "diagnostics.schema.json",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("schemas")
            .join(file);
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
        let mut undescribed = Vec::new();
        walk(&schema, "", &schema["$defs"], &mut undescribed);
        assert!(undescribed.is_empty(), "schemas/{file}: {undescribed:#?}");
    }
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/results.schema.json"),
        )
        .expect("schema"),
    )
    .expect("json");
    assert_eq!(
        results
            .pointer("/properties/plan/$ref")
            .and_then(serde_json::Value::as_str),
        Some("#/$defs/RunMatrix"),
        "results.plan has a real schema, not {{}}"
    );
}
