//! The committed JSON Schema must match the types. Regenerate it with
//! `UPDATE_SCHEMA=1 cargo test -p headroom-spec --test schema`.

use std::path::Path;

#[test]
fn committed_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/spec.schema.json");
    let mut generated =
        serde_json::to_string_pretty(&headroom_spec::json_schema()).expect("schema json");
    generated.push('\n');
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/spec.schema.json is stale: run `UPDATE_SCHEMA=1 cargo test -p headroom-spec --test schema` and commit it"
    );
}
