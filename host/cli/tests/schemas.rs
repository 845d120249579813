//! The generated documents checked in under `schemas/`: each is what rho's code derives from
//! its types, byte for byte. Regenerate them all with
//! `RHO_UPDATE_SCHEMAS=1 cargo test -p rho-cli --test schemas`.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::path::Path;

#[test]
fn the_checked_in_schemas_are_generated_from_the_types() {
    let schemas = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    let documents = [
        // `config.toml`, from the raw `*Toml` types the parser reads (rho-config).
        ("rho-config.schema.json", rho_config::config_schema()),
        // JSON-RPC mode's OpenRPC document, from the wire types (rho-rpc).
        ("rho-rpc.openrpc.json", rho_rpc::openrpc::document()),
    ];
    let mut stale = Vec::new();
    for (file, document) in documents {
        let path = schemas.join(file);
        let mut generated = serde_json::to_string_pretty(&document).unwrap();
        generated.push('\n');
        if std::env::var_os("RHO_UPDATE_SCHEMAS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        if std::fs::read_to_string(&path).unwrap_or_default() != generated {
            stale.push(format!("schemas/{file}"));
        }
    }
    assert!(
        stale.is_empty(),
        "stale: {}; run RHO_UPDATE_SCHEMAS=1 cargo test -p rho-cli --test schemas",
        stale.join(", ")
    );
}
