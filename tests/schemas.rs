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
fn the_plan_schema_is_current() {
    check(
        "plan.schema.json",
        &generated::<headroom_pricing::plan::Report>(),
    );
}

#[test]
fn the_page_context_schema_is_current() {
    check(
        "page-context.schema.json",
        &generated::<headroom_templates::PageContext>(),
    );
}
