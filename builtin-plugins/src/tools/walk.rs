//! How the search tools walk a tree: ignore files respected, symbolic links never followed.

use std::path::Path;

use ignore::WalkBuilder;

/// A walker over `root` with the rules every search tool shares. `.gitignore` files count
/// even outside a git repository (`require_git(false)`): a workspace that is not a checkout
/// still means what its ignore files say. With `include_hidden`, dot entries are walked too,
/// except `.git` directories, which are never worth searching.
pub(crate) fn walker(root: &Path, include_hidden: bool) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    if include_hidden {
        builder.filter_entry(|entry| {
            !(entry.file_name() == ".git" && entry.file_type().is_some_and(|t| t.is_dir()))
        });
    }
    builder
        .hidden(!include_hidden)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .parents(true)
        .require_git(false)
        .follow_links(false);
    builder
}

/// The path of `path` relative to `root`, with `/` separators; empty for the root itself.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let mut out = String::new();
    for component in rel.components() {
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(&component.as_os_str().to_string_lossy());
    }
    out
}
