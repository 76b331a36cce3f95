//! The committed `plan --json` schema matches the types. Regenerate it with
//! `UPDATE_SCHEMA=1 cargo test --workspace`.

use std::path::Path;

#[test]
fn committed_plan_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/plan.schema.json");
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<headroom_pricing::plan::Report>();
    let mut generated = serde_json::to_string_pretty(&schema).expect("schema json");
    generated.push('\n');
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/plan.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test --workspace` and commit it"
    );
}
