//! Turning the bytes of a `SKILL.md` into validated [`SkillMeta`].

use std::path::PathBuf;

use rho_component::{SkillMeta, SkillSource};

use crate::error::SkillError;
use crate::fields::build_meta;
use crate::frontmatter::{FRONTMATTER_MAX_BYTES, HEAD_MAX_BYTES, SplitError, split};
use crate::yaml;

/// The error for a failed [`split`].
pub(crate) fn split_error(error: SplitError, path: PathBuf) -> SkillError {
    match error {
        SplitError::Missing => SkillError::MissingFrontmatter { path },
        SplitError::Unterminated => SkillError::UnterminatedFrontmatter { path },
        SplitError::TooLarge => SkillError::FrontmatterTooLarge {
            path,
            limit: FRONTMATTER_MAX_BYTES,
        },
    }
}

/// Parses and validates the beginning of a `SKILL.md`.
///
/// `bytes` may be the whole file or only its head (as [`crate::read_skill_head`] reads it);
/// nothing past [`FRONTMATTER_MAX_BYTES`] plus delimiter slack is looked at for the frontmatter.
/// `dir_name` is the name of the directory holding the file (the `name` field must equal it);
/// `location` is the file's absolute path (or a `builtin:` pseudo-path) and is used in errors.
/// The body is not kept.
///
/// # Errors
///
/// [`SkillError::MissingFrontmatter`], [`SkillError::UnterminatedFrontmatter`] or
/// [`SkillError::FrontmatterTooLarge`] when the delimiters are wrong, [`SkillError::NotUtf8`],
/// [`SkillError::Yaml`] for a YAML error or forbidden construct, and [`SkillError::Invalid`]
/// with every field problem found.
pub fn parse_skill(
    bytes: &[u8],
    dir_name: &str,
    location: PathBuf,
    source: SkillSource,
) -> Result<SkillMeta, SkillError> {
    let parts = split(bytes).map_err(|e| split_error(e, location.clone()))?;
    let text = match std::str::from_utf8(parts.frontmatter) {
        Ok(text) => text,
        Err(e) => {
            return Err(SkillError::NotUtf8 {
                path: location,
                offset: parts.frontmatter_offset + e.valid_up_to(),
            });
        }
    };
    // The body is read in full only on activation, but what we were given of it must be UTF-8
    // too. A head cut by the caller may end inside a character; that much is tolerated.
    if let Err(e) = std::str::from_utf8(parts.body) {
        let cut_short = e.error_len().is_none() && bytes.len() >= HEAD_MAX_BYTES;
        if !cut_short {
            return Err(SkillError::NotUtf8 {
                path: location,
                offset: parts.body_offset + e.valid_up_to(),
            });
        }
    }
    // Line 1 of the YAML text is line 2 of the file (after the opening `---`).
    let tree = yaml::parse(text).map_err(|e| SkillError::Yaml {
        path: location.clone(),
        line: e.line + 1,
        message: e.message,
    })?;
    build_meta(tree, dir_name, location.clone(), source, 1).map_err(|problems| {
        SkillError::Invalid {
            path: location,
            problems,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn parse(text: &str) -> Result<SkillMeta, SkillError> {
        parse_in("my-skill", text)
    }

    fn parse_in(dir: &str, text: &str) -> Result<SkillMeta, SkillError> {
        parse_skill(
            text.as_bytes(),
            dir,
            PathBuf::from(format!("/skills/{dir}/SKILL.md")),
            SkillSource::User,
        )
    }

    fn problems(text: &str) -> Vec<String> {
        match parse(text) {
            Ok(meta) => panic!("accepted: {meta:?}"),
            Err(e) => e.problems(),
        }
    }

    fn assert_problem(text: &str, needle: &str) {
        let found = problems(text);
        assert!(
            found.iter().any(|p| p.contains(needle)),
            "expected {needle:?} in {found:?}"
        );
    }

    fn skill(extra: &str) -> String {
        format!("---\nname: my-skill\ndescription: Does things.\n{extra}---\n# Body\n")
    }

    #[test]
    fn minimal_skill() {
        let meta = parse(&skill("")).unwrap();
        assert_eq!(meta.name, "my-skill");
        assert_eq!(meta.description, "Does things.");
        assert_eq!(meta.location, PathBuf::from("/skills/my-skill/SKILL.md"));
        assert_eq!(meta.source, SkillSource::User);
        assert!(meta.metadata.is_empty());
        assert_eq!(meta.license, None);
    }

    #[test]
    fn full_skill() {
        let meta = parse(&skill(
            "license: Apache-2.0\ncompatibility: Requires git\nallowed-tools: Bash(git:*) Read\n\
             metadata:\n  author: example\n  version: 1.0\n  count: 3\n  beta: true\n  empty:\n  \"quoted\": '2.0'\n",
        ))
        .unwrap();
        assert_eq!(meta.license.as_deref(), Some("Apache-2.0"));
        assert_eq!(meta.compatibility.as_deref(), Some("Requires git"));
        assert_eq!(meta.allowed_tools.as_deref(), Some("Bash(git:*) Read"));
        let md: Vec<(&str, &str)> = meta
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            md,
            [
                ("author", "example"),
                ("beta", "true"),
                ("count", "3"),
                ("empty", ""),
                ("quoted", "2.0"),
                ("version", "1.0"),
            ]
        );
    }

    #[test]
    fn null_optional_fields_are_absent() {
        let meta = parse(&skill(
            "license:\ncompatibility: ~\nmetadata:\nallowed-tools: null\n",
        ))
        .unwrap();
        assert_eq!(meta.license, None);
        assert_eq!(meta.compatibility, None);
        assert_eq!(meta.allowed_tools, None);
    }

    #[test]
    fn description_is_trimmed_and_block_scalars_work() {
        let meta = parse("---\nname: my-skill\ndescription: >\n  Folded\n  text.\n---\n").unwrap();
        assert_eq!(meta.description, "Folded text.");
    }

    #[test]
    fn crlf_and_bom_are_accepted() {
        let text = "\u{feff}---\r\nname: my-skill\r\ndescription: Does\r\n  things.\r\nmetadata:\r\n  a: b\r\n---\r\nbody\r\n";
        let meta = parse(text).unwrap();
        assert_eq!(meta.description, "Does things.");
        assert_eq!(meta.metadata.get("a").map(String::as_str), Some("b"));
    }

    #[test]
    fn name_rules() {
        assert_problem(
            &skill("").replace("my-skill", "My-Skill"),
            "lowercase ascii",
        );
        assert_problem(
            "---\nname: other\ndescription: d\n---\n",
            "does not match the directory name `my-skill`",
        );
        assert!(parse_in("a", "---\nname: a\ndescription: d\n---\n").is_ok());
        for (dir, name, needle) in [
            ("-pdf", "-pdf", "hyphen"),
            ("pdf-", "pdf-", "hyphen"),
            ("pdf--x", "pdf--x", "consecutive"),
            ("pdf_x", "pdf_x", "lowercase ascii"),
            (
                "pdf-pr\u{43e}cessing",
                "pdf-pr\u{43e}cessing",
                "lowercase ascii",
            ),
        ] {
            let e =
                parse_in(dir, &format!("---\nname: {name}\ndescription: d\n---\n")).unwrap_err();
            assert!(
                e.problems().iter().any(|p| p.contains(needle)),
                "{name}: {e}"
            );
        }
        let name64 = "a".repeat(64);
        assert!(
            parse_in(
                &name64,
                &format!("---\nname: {name64}\ndescription: d\n---\n")
            )
            .is_ok()
        );
        let name65 = "a".repeat(65);
        let e = parse_in(
            &name65,
            &format!("---\nname: {name65}\ndescription: d\n---\n"),
        )
        .unwrap_err();
        assert!(e.problems()[0].contains("65 characters"));
    }

    #[test]
    fn name_must_be_a_string() {
        for (value, found) in [
            ("123", "an integer"),
            ("1.5", "a number"),
            ("yes", "a boolean"),
            ("true", "a boolean"),
            ("null", "found null"),
            ("~", "found null"),
            ("", "found null"),
            ("\n  - a", "a sequence"),
            ("\n  a: b", "a mapping"),
        ] {
            let text = format!("---\nname: {value}\ndescription: d\n---\n");
            let found_problems = parse_in("123", &text).unwrap_err().problems();
            assert!(
                found_problems.iter().any(|p| p.contains(found)),
                "{value:?}: {found_problems:?}"
            );
        }
        // Flow collections are refused before the field rules run.
        assert!(matches!(
            parse("---\nname: [a]\ndescription: d\n---\n"),
            Err(SkillError::Yaml { line: 2, .. })
        ));
        // Quoted, the same text is a string.
        assert!(parse_in("123", "---\nname: '123'\ndescription: d\n---\n").is_ok());
        assert!(parse_in("yes", "---\nname: \"yes\"\ndescription: d\n---\n").is_ok());
    }

    #[test]
    fn description_rules() {
        assert_problem(
            "---\nname: my-skill\n---\n",
            "missing required field `description`",
        );
        assert_problem(
            "---\nname: my-skill\ndescription: ''\n---\n",
            "must not be empty",
        );
        assert_problem(
            "---\nname: my-skill\ndescription: '   '\n---\n",
            "must not be empty",
        );
        assert_problem("---\nname: my-skill\ndescription: 42\n---\n", "an integer");
        let d1024 = "d".repeat(1024);
        assert!(parse(&format!("---\nname: my-skill\ndescription: {d1024}\n---\n")).is_ok());
        // Characters, not bytes: 1024 two-byte characters are fine.
        let e1024 = "\u{e9}".repeat(1024);
        assert!(parse(&format!("---\nname: my-skill\ndescription: {e1024}\n---\n")).is_ok());
        let d1025 = "d".repeat(1025);
        assert_problem(
            &format!("---\nname: my-skill\ndescription: {d1025}\n---\n"),
            "1025 characters",
        );
    }

    #[test]
    fn optional_field_rules() {
        let c500 = "c".repeat(500);
        assert!(parse(&skill(&format!("compatibility: {c500}\n"))).is_ok());
        let c501 = "c".repeat(501);
        assert_problem(
            &skill(&format!("compatibility: {c501}\n")),
            "501 characters",
        );
        assert_problem(&skill("compatibility: ''\n"), "0 characters");
        assert_problem(&skill("license: 2\n"), "`license` must be a string");
        assert_problem(
            &skill("allowed-tools:\n  - Read\n"),
            "`allowed-tools` must be a string",
        );
        assert_problem(&skill("metadata: author\n"), "`metadata` must be a mapping");
        assert_problem(&skill("metadata:\n  - a\n"), "`metadata` must be a mapping");
        assert_problem(
            &skill("metadata:\n  a:\n    b: c\n"),
            "`metadata.a` must be a string",
        );
        assert_problem(
            &skill("metadata:\n  a:\n    - c\n"),
            "`metadata.a` must be a string",
        );
        assert_problem(
            &skill("metadata:\n  a: b\n  a: c\n"),
            "duplicate key `metadata.a`",
        );
    }

    #[test]
    fn unknown_and_duplicate_fields() {
        assert_problem(&skill("version: 1\n"), "unknown field `version` (line 4)");
        assert_problem(&skill("name: my-skill\n"), "duplicate key `name` (line 4)");
    }

    #[test]
    fn reports_every_problem() {
        let found =
            problems("---\nname: Bad--Name-\ndescription: ''\nextra: 1\ncompatibility: ''\n---\n");
        assert!(found.len() >= 6, "{found:?}");
    }

    #[test]
    fn frontmatter_shape_errors() {
        assert!(matches!(
            parse("# Title\n"),
            Err(SkillError::MissingFrontmatter { .. })
        ));
        assert!(matches!(
            parse("\n---\nname: my-skill\n---\n"),
            Err(SkillError::MissingFrontmatter { .. })
        ));
        assert!(matches!(
            parse("---\nname: my-skill\ndescription: d\n"),
            Err(SkillError::UnterminatedFrontmatter { .. })
        ));
        assert!(matches!(
            parse("---\nname: my-skill\ndescription: d\n----\nbody\n"),
            Err(SkillError::UnterminatedFrontmatter { .. })
        ));
        assert_problem("---\n---\nbody\n", "frontmatter is empty");
        assert_problem("---\njust text\n---\n", "must be a yaml mapping");
        assert!(matches!(
            parse("---\nname: my-skill\ndescription: a: b\n---\n"),
            Err(SkillError::Yaml { line: 3, .. })
        ));
    }

    #[test]
    fn dashes_inside_values_do_not_close() {
        let meta = parse(
            "---\nname: my-skill\ndescription: |\n  one\n  ---\n  two --- three\n---\n---\nbody\n",
        )
        .unwrap();
        assert_eq!(meta.description, "one\n---\ntwo --- three");
    }

    #[test]
    fn invalid_utf8_is_rejected() {
        let mut bytes = skill("").into_bytes();
        bytes.extend_from_slice(b"\xff\xfe");
        let e = parse_skill(
            &bytes,
            "my-skill",
            PathBuf::from("/x/SKILL.md"),
            SkillSource::User,
        )
        .unwrap_err();
        assert!(matches!(e, SkillError::NotUtf8 { .. }), "{e}");
        let bytes = b"---\nname: my-skill\ndescription: \xc3\n---\n";
        let e = parse_skill(
            bytes,
            "my-skill",
            PathBuf::from("/x/SKILL.md"),
            SkillSource::User,
        )
        .unwrap_err();
        assert!(matches!(e, SkillError::NotUtf8 { offset: 32, .. }), "{e}");
        assert!(e.to_string().contains("not valid utf-8"));
    }

    #[test]
    fn a_head_cut_inside_a_character_is_fine() {
        let mut bytes = skill("").into_bytes();
        while bytes.len() < HEAD_MAX_BYTES - 1 {
            bytes.push(b'x');
        }
        bytes.push(0xc3); // first byte of a two-byte character, cut off
        assert!(parse_skill(&bytes, "my-skill", PathBuf::from("/x"), SkillSource::User).is_ok());
    }

    #[test]
    fn anchors_aliases_and_tags_are_refused() {
        for extra in [
            "metadata:\n  a: &x b\n  c: *x\n",
            "license: !!str MIT\n",
            "license: !!binary aGk=\n",
            "license: !!python/object:os.system ls\n",
            "license: !foo bar\n",
            "metadata: &m\n  a: b\n",
        ] {
            assert!(
                matches!(parse(&skill(extra)), Err(SkillError::Yaml { .. })),
                "{extra}"
            );
        }
    }

    #[test]
    fn alias_bombs_are_refused_fast() {
        for levels in 4..=12 {
            let mut text =
                String::from("---\nname: my-skill\ndescription: d\nmetadata:\n  l0: lol\n");
            // Block style, so the anchor is the first forbidden thing the reader meets.
            text = text.replace("l0: lol", "l0: &l0 lol");
            for level in 1..=levels {
                let prev = level - 1;
                let refs = vec![format!("*l{prev}"); 9].join(", ");
                text.push_str(&format!("  l{level}: &l{level} [{refs}]\n"));
            }
            text.push_str("---\n");
            let started = Instant::now();
            let result = parse(&text);
            assert!(
                matches!(result, Err(SkillError::Yaml { .. })),
                "{levels}: {result:?}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "{levels} levels"
            );
        }
        let e = parse(&skill("metadata:\n  a: &a [*a]\n")).unwrap_err();
        assert!(e.to_string().contains("anchors"), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused_without_overflow() {
        for depth in [30_000, 100_000] {
            let flow = format!(
                "---\nname: {}{}\n---\n",
                "[".repeat(depth),
                "]".repeat(depth)
            );
            assert!(parse(&flow).is_err(), "flow {depth}");
            let block = format!("---\n{}x\n---\n", "- ".repeat(depth));
            assert!(parse(&block).is_err(), "block {depth}");
            let maps = format!("---\n{}\n---\n", "a: ".repeat(depth));
            assert!(parse(&maps).is_err(), "maps {depth}");
        }
    }

    #[test]
    fn ten_megabyte_frontmatter_hits_the_cap() {
        let text = format!(
            "---\nname: my-skill\ndescription: d\nlicense: {}\n---\n",
            "x".repeat(10 << 20)
        );
        let started = Instant::now();
        assert!(matches!(
            parse(&text),
            Err(SkillError::FrontmatterTooLarge { limit: 65536, .. })
        ));
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn error_messages_are_lower_case_and_name_the_file() {
        for text in ["x", "---\n", "---\na: *b\n---\n", "---\nname: X\n---\n"] {
            let e = parse(text).unwrap_err();
            let message = e.to_string();
            assert!(
                message.starts_with("/skills/my-skill/SKILL.md"),
                "{message}"
            );
            for problem in e.problems() {
                let first = problem
                    .trim_start_matches('`')
                    .chars()
                    .next()
                    .unwrap_or('a');
                assert!(!first.is_uppercase(), "{problem}");
            }
        }
    }
}
