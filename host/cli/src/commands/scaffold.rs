//! `rho plugins new <dir> --tool <name>`: a new Agent Plugins package with one WASM tool
//! component written with `rho-plugin-sdk`, from the template in `plugin-sdk/template/`
//! (embedded in the binary; `{{plugin}}`, `{{tool}}` and `{{sdk_dependency}}` are filled in).
//! The tool crate depends on the SDK this rho carries, written to `$RHO_HOME/sdk/`
//! (`embedded_sdk.rs`), and starts from the SDK's `Cargo.lock`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};

use super::embedded_sdk::{SDK_LOCK, TEMPLATE_FILES, ensure_sdk};
use crate::context::Context;
use crate::output::{clean, json_sorted, out, path_str};
use crate::shapes::NewPlugin;

/// Agent Plugins names: lowercase ASCII letters and digits in `-`-separated words.
fn valid_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.split('-').all(|w| {
            !w.is_empty()
                && w.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Tool names double as Rust crate-name parts and component names: `[a-z][a-z0-9_]*`.
fn valid_tool_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= 48
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn toml_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

pub fn new_plugin(
    ctx: &Context,
    dir: &Path,
    tool: &str,
    sdk_path: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let dir = ctx.arg_path(dir);
    let Some(plugin) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
        bail!("{} has no usable directory name", dir.display());
    };
    if !valid_plugin_name(&plugin) {
        bail!(
            "{plugin:?} is not a valid plugin name: use lowercase letters and digits in \
             '-'-separated words (the directory name is the plugin name)"
        );
    }
    if !valid_tool_name(tool) {
        bail!("{tool:?} is not a valid tool name: use [a-z][a-z0-9_]*, at most 48 characters");
    }
    if dir.exists()
        && std::fs::read_dir(&dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!("{} already exists and is not empty", dir.display());
    }
    let sdk: PathBuf = match sdk_path {
        Some(path) => {
            let path = ctx.arg_path(path);
            let sdk = dunce::canonicalize(&path)
                .with_context(|| format!("the SDK directory {} cannot be used", path.display()))?;
            if !sdk.join("Cargo.toml").is_file() {
                bail!(
                    "{} holds no Cargo.toml: not the SDK directory",
                    sdk.display()
                );
            }
            sdk
        }
        None => ensure_sdk(&ctx.paths.sdk_root())?,
    };
    // Cargo.toml is UTF-8 text: a path that is not cannot be named there (its lossy text would
    // name a directory that does not exist).
    let Some(sdk_text) = sdk.to_str() else {
        bail!(
            "the SDK directory {} is not a UTF-8 path, so the new plugin's Cargo.toml cannot name \
             it; pass --sdk-path with a UTF-8 path",
            sdk.display()
        );
    };
    let dependency = format!("{{ path = {} }}", toml_string(sdk_text));
    let fill = |text: &str| {
        text.replace("{{plugin}}", &plugin)
            .replace("{{tool}}", tool)
            .replace("{{sdk_dependency}}", &dependency)
    };
    let mut files: Vec<(String, Vec<u8>, bool)> = Vec::new();
    for file in TEMPLATE_FILES {
        let text = std::str::from_utf8(file.bytes)
            .with_context(|| format!("the template's {} is not UTF-8", file.path))?;
        files.push((fill(file.path), fill(text).into_bytes(), file.executable));
    }
    files.push(("tool/Cargo.lock".to_owned(), SDK_LOCK.to_vec(), false));
    let mut written = Vec::new();
    for (path, bytes, executable) in files {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&target, bytes)
            .with_context(|| format!("cannot write {}", target.display()))?;
        if executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("cannot make {} executable", target.display()))?;
        }
        written.push(target);
    }
    std::fs::create_dir_all(dir.join(rho_plugins::TOOLS_DIR)).with_context(|| {
        format!(
            "cannot create {}",
            dir.join(rho_plugins::TOOLS_DIR).display()
        )
    })?;
    if ctx.json {
        json_sorted(&NewPlugin {
            plugin: &plugin,
            tool,
            path: path_str(&dir),
            sdk: path_str(&sdk),
            files: written.iter().map(|p| path_str(p)).collect(),
        });
    } else {
        out(&format!(
            "created plugin {} with tool {} in {}\nrho-plugin-sdk: {}\nnext: cd {} && ./build.sh && rho plugins install .\n",
            clean(&plugin),
            clean(tool),
            clean(&path_str(&dir)),
            clean(&path_str(&sdk)),
            clean(&path_str(&dir))
        ));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rules() {
        assert!(valid_plugin_name("word-tools"));
        assert!(!valid_plugin_name("Word-Tools"));
        assert!(!valid_plugin_name("a--b"));
        assert!(valid_tool_name("word_count"));
        assert!(!valid_tool_name("word-count"));
        assert!(!valid_tool_name("1tool"));
        assert_eq!(toml_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
