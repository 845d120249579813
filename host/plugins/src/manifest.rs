//! `plugin.json` (Agent Plugins §5, §8.1): reading, `$schema` selection, the closed schema with
//! its two non-fatal exceptions, and the typed manifest.

use std::path::Path;

use rho_component::{Diagnostic, DiagnosticCode, json_kind};
use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::Digest as _;

use crate::containment::{Beneath, ContainError};
use crate::json_doc;
use crate::schema::{Contract, SpecVersion, violations};

/// `plugin.json` is metadata; anything bigger than this is refused before parsing.
pub const MANIFEST_MAX_BYTES: u64 = 1024 * 1024;

/// The file name of the manifest at a plugin root.
pub const MANIFEST_FILE: &str = "plugin.json";

/// The top-level fields the 1.0.0 manifest schema permits.
const KNOWN_FIELDS: &[&str] = &[
    "$schema",
    "name",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "extensions",
];

/// A validated `plugin.json`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Manifest {
    /// The `$schema` identifier (selects [`Manifest::spec`]).
    #[serde(rename = "$schema")]
    pub schema: String,
    /// The plugin name.
    pub name: String,
    /// Optional version string.
    #[serde(default)]
    pub version: Option<String>,
    /// Optional short description.
    #[serde(default)]
    pub description: Option<String>,
    /// Optional author.
    #[serde(default)]
    pub author: Option<Author>,
    /// Optional documentation URL (not checked: §5.4).
    #[serde(default)]
    pub homepage: Option<String>,
    /// Optional repository URL (not checked: §5.4).
    #[serde(default)]
    pub repository: Option<String>,
    /// Optional license identifier.
    #[serde(default)]
    pub license: Option<String>,
    /// Search tags.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Client extension data, by namespace; rho implements no namespace yet, so the values are
    /// kept as given and never validated (§8.1).
    #[serde(default)]
    pub extensions: Map<String, Value>,
    /// The Agent Plugins version selected by `$schema`.
    #[serde(skip, default = "default_spec")]
    pub spec: SpecVersion,
}

fn default_spec() -> SpecVersion {
    SpecVersion::V1_0_0
}

/// The `author` object.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Author {
    /// Author name.
    #[serde(default)]
    pub name: Option<String>,
    /// Author email (not checked).
    #[serde(default)]
    pub email: Option<String>,
    /// Author URL (not checked).
    #[serde(default)]
    pub url: Option<String>,
}

/// The result of loading a manifest: the manifest if the plugin may load, and every diagnostic
/// (non-fatal ones come along with a manifest; fatal ones come without).
#[derive(Debug)]
pub(crate) struct ManifestOutcome {
    pub manifest: Option<Manifest>,
    /// No path named `plugin.json` exists: the directory is not a plugin at all.
    pub absent: bool,
    /// The `name` field when it is at least a string, even if the plugin was rejected.
    pub claimed_name: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// The SHA-256 of the bytes read, when the file could be read.
    pub sha256: Option<[u8; 32]>,
}

fn rejected(claimed_name: Option<String>, diagnostics: Vec<Diagnostic>) -> ManifestOutcome {
    ManifestOutcome {
        manifest: None,
        absent: false,
        claimed_name,
        diagnostics,
        sha256: None,
    }
}

/// Reads and validates `plugin.json` at the resolved plugin root.
pub(crate) fn load_manifest(root: &Beneath) -> ManifestOutcome {
    let path = root.root().join(MANIFEST_FILE);
    let bytes = match root.read(Path::new(MANIFEST_FILE), MANIFEST_MAX_BYTES) {
        Ok(bytes) => bytes,
        Err(ContainError::Escape(target)) => {
            let d = Diagnostic::error(
                DiagnosticCode::PathEscape,
                format!(
                    "plugin.json resolves outside the plugin root (to {})",
                    target.display()
                ),
            );
            return rejected(None, vec![d.with_path(path)]);
        }
        Err(ContainError::Missing) if std::fs::symlink_metadata(&path).is_err() => {
            return ManifestOutcome {
                absent: true,
                ..rejected(None, Vec::new())
            };
        }
        Err(e) => {
            let d = Diagnostic::error(
                DiagnosticCode::ManifestUnreadable,
                format!("plugin.json cannot be read: it {e}"),
            );
            return rejected(None, vec![d.with_path(path)]);
        }
    };
    ManifestOutcome {
        sha256: Some(sha2::Sha256::digest(&bytes).into()),
        ..validate_manifest_bytes(&bytes, &path)
    }
}

/// Validates manifest bytes; `path` is only used in diagnostics. Public to the crate for
/// `validate` of a single file and for fuzzing.
pub(crate) fn validate_manifest_bytes(bytes: &[u8], path: &Path) -> ManifestOutcome {
    let at = |d: Diagnostic| d.with_path(path);
    let doc = match json_doc::parse(bytes) {
        Ok(doc) => doc,
        Err(e) => {
            let d = Diagnostic::error(
                DiagnosticCode::ManifestInvalidJson,
                format!("plugin.json: {e}"),
            );
            return rejected(None, vec![at(d)]);
        }
    };
    let Value::Object(mut object) = doc.value else {
        let d = Diagnostic::error(
            DiagnosticCode::ManifestInvalid,
            "plugin.json must contain a JSON object at the top level",
        );
        return rejected(None, vec![at(d)]);
    };
    let claimed_name = object
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut diagnostics = Vec::new();

    // Duplicate keys are refused (a repeated key would silently override the first), except inside
    // the value of an extension namespace, which rho must not validate (§8.1).
    let fatal_dups: Vec<&String> = doc
        .duplicates
        .iter()
        .filter(|p| !is_inside_extension_value(p))
        .collect();
    if !fatal_dups.is_empty() {
        for pointer in fatal_dups {
            diagnostics.push(at(Diagnostic::error(
                DiagnosticCode::ManifestInvalidJson,
                format!("plugin.json repeats the key at {pointer}"),
            )));
        }
        return rejected(claimed_name, diagnostics);
    }

    // `$schema` selects the contract (§5.2). Missing or mistyped is a required-field violation;
    // a string we do not know is an unsupported version.
    let version = match object.get("$schema") {
        None => {
            let d = Diagnostic::error(
                DiagnosticCode::ManifestInvalid,
                format!(
                    "plugin.json is missing the required field \"$schema\" (supported: {})",
                    SpecVersion::supported_plugin_schemas()
                ),
            );
            return rejected(claimed_name, vec![at(d)]);
        }
        Some(Value::String(id)) => match SpecVersion::from_plugin_schema(id) {
            Some(version) => version,
            None => {
                let d = Diagnostic::error(
                    DiagnosticCode::ManifestUnsupportedSchema,
                    format!(
                        "plugin.json declares unsupported \"$schema\" {}; this rho supports {}",
                        quote(id),
                        SpecVersion::supported_plugin_schemas()
                    ),
                );
                return rejected(claimed_name, vec![at(d)]);
            }
        },
        Some(other) => {
            let d = Diagnostic::error(
                DiagnosticCode::ManifestInvalid,
                format!(
                    "plugin.json \"$schema\" must be a string, found {}",
                    json_kind(other)
                ),
            );
            return rejected(claimed_name, vec![at(d)]);
        }
    };

    // The two non-fatal exceptions (§5.2, §8.1): unknown top-level fields and a non-object
    // `extensions` are reported and ignored. Members of `extensions` belong to namespaces rho
    // does not implement, so their values are ignored without validation.
    let unknown: Vec<String> = object
        .keys()
        .filter(|k| !KNOWN_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    for key in unknown {
        object.remove(&key);
        diagnostics.push(at(Diagnostic::warning(
            DiagnosticCode::ManifestUnknownField,
            format!(
                "plugin.json has unknown top-level field {} (ignored)",
                quote(&key)
            ),
        )));
    }
    let mut extensions = Map::new();
    match object.remove("extensions") {
        None => {}
        Some(Value::Object(map)) => extensions = map,
        Some(other) => diagnostics.push(at(Diagnostic::warning(
            DiagnosticCode::ManifestExtensionsNotObject,
            format!(
                "plugin.json \"extensions\" is {}, not an object (ignored)",
                json_kind(&other)
            ),
        ))),
    }

    let object = Value::Object(object);
    let problems = violations(version, Contract::Manifest, &object);
    if !problems.is_empty() {
        for problem in problems {
            diagnostics.push(at(Diagnostic::error(
                DiagnosticCode::ManifestInvalid,
                format!("plugin.json {problem}"),
            )));
        }
        return rejected(claimed_name, diagnostics);
    }
    match serde_json::from_value::<Manifest>(object) {
        Ok(mut manifest) => {
            manifest.spec = version;
            manifest.extensions = extensions;
            ManifestOutcome {
                manifest: Some(manifest),
                absent: false,
                claimed_name,
                diagnostics,
                sha256: None,
            }
        }
        Err(e) => {
            // Unreachable when the schema and the struct agree; reported rather than trusted.
            diagnostics.push(at(Diagnostic::error(
                DiagnosticCode::ManifestInvalid,
                format!("plugin.json: {e}"),
            )));
            rejected(claimed_name, diagnostics)
        }
    }
}

/// `/extensions/<ns>/...`: inside a namespace's value (the namespace key itself may not repeat).
fn is_inside_extension_value(pointer: &str) -> bool {
    let mut parts = pointer.split('/').skip(1);
    parts.next() == Some("extensions") && parts.next().is_some() && parts.next().is_some()
}

/// Quotes user text for a message, escaping control characters so nothing reaches a terminal raw.
pub(crate) fn quote(text: &str) -> String {
    const MAX: usize = 200;
    let mut out = String::from("\"");
    for (i, c) in text.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> ManifestOutcome {
        validate_manifest_bytes(json.as_bytes(), Path::new("/p/plugin.json"))
    }

    fn codes(o: &ManifestOutcome) -> Vec<&'static str> {
        o.diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    const S: &str = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json";

    #[test]
    fn minimal_and_full_manifests_load() {
        let o = check(&format!(r#"{{"$schema":"{S}","name":"minimal-plugin"}}"#));
        assert_eq!(o.manifest.unwrap().name, "minimal-plugin");
        let o = check(&format!(
            r#"{{"$schema":"{S}","name":"p","version":"not-semver","description":"d",
            "author":{{"name":"a","email":"not an email","url":"nope"}},"homepage":"x",
            "repository":"y","license":"Proprietary","keywords":["k"],
            "extensions":{{"com.example":{{"x":1,"x":2}},"org.other":5}}}}"#
        ));
        assert!(o.diagnostics.is_empty(), "{:?}", o.diagnostics);
        let m = o.manifest.unwrap();
        assert_eq!(m.extensions.len(), 2);
        assert_eq!(m.version.as_deref(), Some("not-semver"));
    }

    #[test]
    fn non_fatal_exceptions() {
        let o = check(&format!(
            r#"{{"$schema":"{S}","name":"p","skills":"./x","hooks":1}}"#
        ));
        assert!(o.manifest.is_some());
        assert_eq!(
            codes(&o),
            ["manifest-unknown-field", "manifest-unknown-field"]
        );
        let o = check(&format!(
            r#"{{"$schema":"{S}","name":"p","extensions":"str"}}"#
        ));
        assert!(o.manifest.is_some());
        assert_eq!(codes(&o), ["manifest-extensions-not-object"]);
    }

    #[test]
    fn fatal_violations() {
        let cases = [
            ("", "manifest-invalid-json"),
            ("[]", "manifest-invalid"),
            (r#"{"name":"p"}"#, "manifest-invalid"),
            (r#"{"$schema":5,"name":"p"}"#, "manifest-invalid"),
            (
                r#"{"$schema":"https://agent-plugins.org/schemas/9.0.0/plugin.schema.json","name":"p"}"#,
                "manifest-unsupported-schema",
            ),
            (&format!(r#"{{"$schema":"{S}"}}"#), "manifest-invalid"),
            (
                &format!(r#"{{"$schema":"{S}","name":""}}"#),
                "manifest-invalid",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"Bad"}}"#),
                "manifest-invalid",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p","version":1}}"#),
                "manifest-invalid",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p","author":{{"x":"y"}}}}"#),
                "manifest-invalid",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p","author":{{"name":1}}}}"#),
                "manifest-invalid",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p","keywords":[1]}}"#),
                "manifest-invalid",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p","name":"q"}}"#),
                "manifest-invalid-json",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p","author":{{"name":"a","name":"b"}}}}"#),
                "manifest-invalid-json",
            ),
            (
                &format!(r#"{{"$schema":"{S}","name":"p",}}"#),
                "manifest-invalid-json",
            ),
        ];
        for (json, code) in cases {
            let o = check(json);
            assert!(o.manifest.is_none(), "{json}");
            assert!(codes(&o).contains(&code), "{json}: {:?}", o.diagnostics);
        }
    }

    #[test]
    fn unsupported_schema_names_supported_versions() {
        let o = check(
            r#"{"$schema":"https://agent-plugins.org/schemas/2.0.0/plugin.schema.json","name":"p"}"#,
        );
        assert!(o.diagnostics[0].message.contains(S));
        assert_eq!(o.claimed_name.as_deref(), Some("p"));
    }

    #[test]
    fn quote_escapes_controls() {
        assert_eq!(quote("a\u{1b}[31m\n"), "\"a\\u{1b}[31m\\n\"");
    }
}
