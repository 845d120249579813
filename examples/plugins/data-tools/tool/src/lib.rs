//! The `data` tool component of the `data-tools` example plugin, written with
//! `rho-plugin-sdk`: `convert` rewrites a JSON, TOML or YAML document in another of the three,
//! `query` extracts one value by JSON Pointer or dotted path. Documents come as text or from
//! a workspace file (the manifest grants this component read access to the workspace).

mod convert;
mod document;
mod format;
mod query;
mod selector;

pub use convert::Convert;
pub use query::Query;

rho_plugin_sdk::export_tools!(Convert, Query);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rho_plugin_sdk::{MockHost, ToolError, ToolSpec};
    use serde_json::json;

    const CARGO: &str = "[package]\nname = \"rho\"\nversion = \"0.1.0\"\nauthors = [\"a\", \"b\"]\n\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n";

    fn host() -> MockHost {
        MockHost::new()
            .with_file("Cargo.toml", CARGO)
            .with_file("notes.txt", "key: value\n")
            .with_file("bad.json", "{\"a\": ")
    }

    #[test]
    fn specs_are_sound() {
        assert_eq!(ToolSpec::of::<Convert>().problems(), Vec::<String>::new());
        assert_eq!(ToolSpec::of::<Query>().problems(), Vec::<String>::new());
    }

    #[test]
    fn convert_a_workspace_file_and_inline_text() {
        let host = host();
        let out = host
            .call::<Convert>(r#"{"path": "Cargo.toml", "to": "json", "compact": true}"#)
            .unwrap();
        assert_eq!(
            out.text_content(),
            r#"{"package":{"name":"rho","version":"0.1.0","authors":["a","b"]},"dependencies":{"serde":{"version":"1","features":["derive"]}}}"#
        );
        let out = host
            .call::<Convert>(r#"{"path": "Cargo.toml", "to": "yaml"}"#)
            .unwrap();
        assert!(
            out.text_content().starts_with("package:\n  name: rho\n"),
            "{}",
            out.text_content()
        );
        // Detected as YAML (no extension to go by).
        let out = host
            .call::<Convert>(r#"{"path": "notes.txt", "to": "toml"}"#)
            .unwrap();
        assert_eq!(out.text_content(), "key = \"value\"\n");
        let out = host
            .call::<Convert>(r#"{"input": "{\"a\": [1, 2]}", "to": "toml"}"#)
            .unwrap();
        assert_eq!(out.text_content(), "a = [1, 2]\n");
    }

    #[test]
    fn convert_errors_are_precise() {
        let host = host();
        let cases = [
            (
                r#"{"input": "{\"a\": null}", "to": "toml"}"#,
                "`a`: TOML has no null",
            ),
            (
                r#"{"input": "[1]", "from": "json", "to": "toml"}"#,
                "needs a table at the top",
            ),
            (
                r#"{"input": "a = ", "from": "toml", "to": "json"}"#,
                "input is not valid toml",
            ),
            (
                r#"{"path": "bad.json", "to": "yaml"}"#,
                "bad.json is not valid json",
            ),
            (r#"{"path": "missing.toml", "to": "yaml"}"#, "missing.toml"),
            (
                r#"{"input": "a", "to": "xml"}"#,
                "to: unknown variant `xml`",
            ),
            (r#"{"input": "a"}"#, "missing field `to`"),
            (r#"{"to": "json"}"#, "give `input`"),
        ];
        for (args, needle) in cases {
            let err = host.call::<Convert>(args).unwrap_err();
            let message = match &err {
                ToolError::InvalidArguments(m) | ToolError::Failed(m) => m.clone(),
                other => format!("{other:?}"),
            };
            assert!(message.contains(needle), "{args}: {message}");
        }
    }

    #[test]
    fn query_by_path_and_pointer() {
        let host = host();
        let out = host
            .call::<Query>(r#"{"path": "Cargo.toml", "select": "package.authors[1]"}"#)
            .unwrap();
        assert_eq!(out.text_content(), "\"b\"");
        assert_eq!(out.structured(), Some(&json!({"value": "b"})));
        let out = host
            .call::<Query>(r#"{"path": "Cargo.toml", "select": "/package/name", "raw": true}"#)
            .unwrap();
        assert_eq!(out.text_content(), "rho");
        let out = host
            .call::<Query>(r#"{"path": "Cargo.toml", "select": "dependencies", "format": "toml"}"#)
            .unwrap();
        assert_eq!(
            out.text_content(),
            "[serde]\nversion = \"1\"\nfeatures = [\"derive\"]\n"
        );
        let out = host
            .call::<Query>(r#"{"input": "a: [1, 2, 3]", "select": "a[-1]"}"#)
            .unwrap();
        assert_eq!(out.text_content(), "3");
    }

    #[test]
    fn query_errors_name_what_is_there() {
        let host = host();
        let err = host
            .call::<Query>(r#"{"path": "Cargo.toml", "select": "package.license"}"#)
            .unwrap_err();
        assert_eq!(
            err,
            ToolError::Failed(
                "no key \"license\" at `package` (keys there: name, version, authors)".into()
            )
        );
        let err = host
            .call::<Query>(r#"{"input": "{}", "select": "a..b"}"#)
            .unwrap_err();
        assert!(matches!(err, ToolError::InvalidArguments(m) if m.starts_with("select: ")));
    }
}
