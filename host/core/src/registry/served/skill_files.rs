//! Skills' files as resources of `rho mcp serve` (`docs/mcp.md`, "rho as an MCP server"):
//! `skill://<name>/SKILL.md` and `skill://<name>/<relative path>` for each file a skill folder
//! bundles (scripts, references, assets), listed and read through `rho-skills`' contained
//! readers: nothing outside the skill folder, no link out of it, each file capped.

use base64::Engine as _;
use rho_component::{ResourceBody, ResourceContent, ServerResource, SkillMeta};

/// The URI scheme of skills' files (the one the MCP skills extension, SEP-2640, names).
pub(super) const SCHEME: &str = "skill://";

/// Files served per skill at most (besides `SKILL.md`).
const FILES_PER_SKILL: usize = 512;

/// The largest file served.
const MAX_FILE_BYTES: u64 = 16 << 20;

/// The manifest's name in a skill folder.
const SKILL_FILE: &str = "SKILL.md";

/// The resources of `skill`: its `SKILL.md` (when it has one inside its folder), then its
/// files.
pub(super) fn resources(skill: &SkillMeta) -> Vec<ServerResource> {
    if rho_skills::is_builtin(skill) {
        return Vec::new();
    }
    let manifest = manifest(skill).map(|_| ServerResource {
        uri: uri(&skill.name, SKILL_FILE),
        name: skill.name.clone(),
        title: None,
        description: Some(skill.description.clone()),
        mime_type: Some("text/markdown".to_owned()),
        template: false,
    });
    manifest
        .into_iter()
        .chain(files(skill).map(|relative| ServerResource {
            uri: uri(&skill.name, &relative),
            mime_type: mime_type(&relative).map(str::to_owned),
            name: relative,
            title: None,
            description: None,
            template: false,
        }))
        .collect()
}

/// Reads the file of one of `skills` at `uri`: `None` when the URI names no file of theirs,
/// the reason it cannot be read otherwise.
pub(super) fn read<'a>(
    skills: impl Iterator<Item = &'a SkillMeta>,
    uri: &str,
) -> Option<Result<ResourceBody, String>> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (name, _) = rest.split_once('/')?;
    let skill = skills
        .filter(|s| !rho_skills::is_builtin(s))
        .find(|s| s.name == name)?;
    let bytes = if uri == self::uri(name, SKILL_FILE) {
        match manifest(skill) {
            None => Err(format!(
                "skill `{name}`: its {SKILL_FILE} is not inside its folder"
            )),
            Some(file) => rho_component::read_regular(&file, MAX_FILE_BYTES)
                .map_err(|e| format!("skill `{name}`: {e}")),
        }
    } else {
        let relative = files(skill).find(|relative| self::uri(name, relative) == uri)?;
        rho_skills::read_resource(skill, &relative, FILES_PER_SKILL, MAX_FILE_BYTES)
            .map_err(|e| e.to_string())
    };
    Some(bytes.map(|bytes| {
        ResourceBody {
            uri: uri.to_owned(),
            mime_type: Some(
                mime_type(rest)
                    .unwrap_or(if looks_like_text(&bytes) {
                        "text/plain"
                    } else {
                        "application/octet-stream"
                    })
                    .to_owned(),
            ),
            content: match String::from_utf8(bytes) {
                Ok(text) if looks_like_text(text.as_bytes()) => ResourceContent::Text(text),
                Ok(text) => ResourceContent::Blob(encode(text.as_bytes())),
                Err(e) => ResourceContent::Blob(encode(e.as_bytes())),
            },
        }
    }))
}

/// Where `skill`'s `SKILL.md` really is, when that is inside its folder (the manifest too is
/// never read through a link out of it).
fn manifest(skill: &SkillMeta) -> Option<std::path::PathBuf> {
    let file = std::fs::canonicalize(&skill.location).ok()?;
    let dir = std::fs::canonicalize(skill.directory()).ok()?;
    file.starts_with(&dir).then_some(file)
}

/// The relative paths (`/`-separated) of `skill`'s files whose names are UTF-8.
fn files(skill: &SkillMeta) -> impl Iterator<Item = String> {
    rho_skills::list_resources(skill, FILES_PER_SKILL)
        .into_iter()
        .filter_map(|path| {
            let parts: Option<Vec<&str>> = path.iter().map(|p| p.to_str()).collect();
            parts.map(|parts| parts.join("/"))
        })
}

/// The URI of `relative` in skill `name`: each path segment percent-encoded.
fn uri(name: &str, relative: &str) -> String {
    let mut out = format!("{SCHEME}{name}");
    for segment in relative.split('/') {
        out.push('/');
        for byte in segment.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                out.push(char::from(byte));
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// Text: valid UTF-8 (checked by the caller) without NUL bytes.
fn looks_like_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The MIME type a file's extension says, for the common kinds a skill bundles.
fn mime_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use rho_component::SkillSource;

    fn skill(dir: &std::path::Path) -> SkillMeta {
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: demo\ndescription: Demo.\n---\nBody\n",
        )
        .unwrap();
        std::fs::write(dir.join("scripts/run me.sh"), "echo hi\n").unwrap();
        std::fs::write(dir.join("logo.png"), [0x89, b'P', b'N', b'G', 0, 1]).unwrap();
        rho_skills::load_skill_dir(dir, SkillSource::User).unwrap()
    }

    #[test]
    fn files_are_listed_and_read_as_text_or_blob() {
        let tmp = tempfile::tempdir().unwrap();
        let meta = skill(&tmp.path().join("demo"));
        let listed: Vec<String> = resources(&meta).into_iter().map(|r| r.uri).collect();
        assert_eq!(
            listed,
            [
                "skill://demo/SKILL.md",
                "skill://demo/logo.png",
                "skill://demo/scripts/run%20me.sh"
            ]
        );
        let read = |uri: &str| read(std::iter::once(&meta), uri);
        let script = read("skill://demo/scripts/run%20me.sh").unwrap().unwrap();
        assert_eq!(script.content, ResourceContent::Text("echo hi\n".into()));
        assert_eq!(script.mime_type.as_deref(), Some("text/x-shellscript"));
        let logo = read("skill://demo/logo.png").unwrap().unwrap();
        assert_eq!(
            logo.content,
            ResourceContent::Blob(encode(&[0x89, b'P', b'N', b'G', 0, 1]))
        );
        let manifest = read("skill://demo/SKILL.md").unwrap().unwrap();
        assert!(matches!(manifest.content, ResourceContent::Text(t) if t.contains("Body")));
        assert!(read("skill://demo/nope.txt").is_none());
        for unknown in [
            "skill://demo/../secret",
            "skill://demo/scripts/run me.sh",
            "skill://other/SKILL.md",
            "file:///etc/passwd",
        ] {
            assert!(read(unknown).is_none(), "{unknown}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_manifest_linked_from_outside_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside.md");
        std::fs::write(
            &outside,
            "---\nname: demo\ndescription: Demo.\n---\nSecret\n",
        )
        .unwrap();
        let dir = tmp.path().join("demo");
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("SKILL.md")).unwrap();
        let meta = rho_skills::load_skill_dir(&dir, SkillSource::User).unwrap();
        let read = read(std::iter::once(&meta), "skill://demo/SKILL.md").unwrap();
        assert!(read.unwrap_err().contains("not inside its folder"));
        assert!(resources(&meta).is_empty());
    }
}
