//! Agent Skills for rho: reading and validating `SKILL.md`, discovering loose skill roots,
//! choosing between skills of the same name, and reading a skill's body and bundled files when
//! it is activated.
//!
//! This crate does not decide where the roots are (configuration and the registry do), does
//! not look inside plugins (`rho-plugins` calls [`discover_root`] on a plugin's `skills/`
//! directory), and does not render catalogs for the model. It keeps no skill bodies in memory:
//! discovery reads only the head of each `SKILL.md`.
//!
//! # How a `SKILL.md` is read
//!
//! These rules implement the Agent Skills specification; where it is silent, the choice made
//! is stated.
//!
//! 1. The file is named exactly `SKILL.md` ([`SKILL_FILE`]); `skill.md` is not a skill file.
//!    It must resolve (links followed) to a regular file: a directory, FIFO, socket or device is
//!    refused before it is opened, and the open itself never blocks.
//! 2. A UTF-8 byte-order mark at the start is skipped. Line breaks may be `\n` or `\r\n`.
//!    Bytes that are not UTF-8 are an error.
//! 3. The first line must be exactly `---` (a trailing `\r` allowed). The frontmatter ends at
//!    the next line that is exactly `---`: `----`, `--- # note`, ` ---`, or `---` inside a
//!    value on a longer line do not end it, and neither does an indented `---` inside a block
//!    scalar. Everything after that line is the body; `---` lines in the body are content.
//!    A file without the opening line, or without a closing line, is refused.
//! 4. The frontmatter is capped at [`FRONTMATTER_MAX_BYTES`] (64 KiB) *before* any YAML
//!    parsing; discovery reads at most [`HEAD_MAX_BYTES`] of the file.
//! 5. The frontmatter must be one YAML document holding a block-style mapping. Anchors,
//!    aliases and tags (`&a`, `*a`, `!!str`, `!foo`) are refused outright, which makes alias
//!    bombs harmless; flow collections (`{a: b}`, `[a]`) are refused as the reference
//!    validator refuses them; nesting deeper than three levels is refused; duplicate keys are
//!    an error, at the top level and inside `metadata`.
//! 6. Fields (any other top-level key is an error):
//!    - `name` — required string, 1–64 characters, only ASCII `a-z`, `0-9` and `-`, not
//!      starting or ending with `-`, no `--`, equal to the name of the directory holding the
//!      file. Unicode letters are refused (the specification lists `a-z`).
//!    - `description` — required string, not empty after trimming, at most 1024 characters
//!      counted as YAML reads it (a block scalar's final line break counts). Stored trimmed.
//!    - `license` — optional string.
//!    - `compatibility` — optional string of 1–500 characters.
//!    - `metadata` — optional mapping whose values are scalars. Values are kept exactly as
//!      written, without YAML typing: `version: 1.0` is `"1.0"`, `beta: true` is `"true"`,
//!      an empty value is `""` (this matches the reference validator, which reads every scalar
//!      as a string). A mapping or sequence value is an error.
//!    - `allowed-tools` — optional string (a YAML list is an error).
//! 7. A string field must be a YAML string: an unquoted value that YAML reads as a number,
//!    boolean or null (`name: 123`, `name: 1.0`, `name: yes`, `name: ~`) is an error with a
//!    hint to quote it. Booleans include the YAML 1.1 words `yes`/`no`/`on`/`off`. An optional
//!    field whose value is null (`license:` with nothing after it) counts as absent.
//! 8. Lengths count Unicode scalar values, not bytes. Every problem found is reported, not
//!    only the first ([`SkillError::Invalid`]).
//! 9. The body, read on activation by [`read_body`], is the text after the closing line,
//!    trimmed, cut at [`BODY_MAX_BYTES`] (1 MiB) with [`TRUNCATION_MARKER`] appended.
//!
//! # Precedence
//!
//! [`merge`] keeps one skill per name: the one whose source has the smallest
//! [`rho_component::SkillSource::rank`], and among equals the first in its input. Each loser
//! becomes a `skill-shadowed` warning.

mod body;
mod discover;
mod error;
mod fields;
mod file;
mod frontmatter;
mod merge;
mod parse;
mod resources;
#[cfg(test)]
mod test_meta;
mod validate;
mod yaml;

pub use body::{
    BUILTIN_PREFIX, TRUNCATION_MARKER, builtin_location, is_builtin, read_body, read_body_from,
};
pub use discover::discover_root;
pub use error::SkillError;
pub use fields::{
    ALLOWED_FIELDS, COMPATIBILITY_MAX_CHARS, DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS, name_problems,
};
pub use file::{load_skill_dir, read_skill_head};
pub use frontmatter::{
    BODY_MAX_BYTES, FRONTMATTER_MAX_BYTES, HEAD_MAX_BYTES, SKILL_FILE, split_body,
};
pub use merge::{Merged, Shadowed, SkillSet, merge};
pub use parse::parse_skill;
pub use resources::{RESOURCE_MAX_DEPTH, list_resources, read_resource};
pub use validate::validate_dir;
