//! Finding the frontmatter of a `SKILL.md`: byte-order mark, delimiter lines and the size cap.

/// The file every skill directory must hold, spelled exactly so.
pub const SKILL_FILE: &str = "SKILL.md";

/// The largest frontmatter accepted, in bytes (64 KiB): the text between the opening and the
/// closing `---` lines. It is enforced before any YAML parsing.
pub const FRONTMATTER_MAX_BYTES: usize = 64 * 1024;

/// The largest body returned on activation, in bytes (1 MiB). Longer bodies are cut and marked.
pub const BODY_MAX_BYTES: usize = 1024 * 1024;

/// How many bytes [`crate::read_skill_head`] reads: the frontmatter cap plus room for a BOM and
/// the two delimiter lines (`---\r\n` each).
pub const HEAD_MAX_BYTES: usize = FRONTMATTER_MAX_BYTES + 16;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A `SKILL.md` cut into its parts. Both slices borrow the input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split<'a> {
    /// The bytes between the delimiter lines (the YAML).
    pub frontmatter: &'a [u8],
    /// Byte offset of `frontmatter` in the original input (a BOM included).
    pub frontmatter_offset: usize,
    /// Everything after the closing delimiter line, untrimmed.
    pub body: &'a [u8],
    /// Byte offset of `body` in the original input.
    pub body_offset: usize,
}

/// Why the input could not be cut into frontmatter and body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SplitError {
    /// The first line is not exactly `---`.
    Missing,
    /// No closing `---` line before the end of the input.
    Unterminated,
    /// No closing `---` line within [`FRONTMATTER_MAX_BYTES`].
    TooLarge,
}

/// The length of a delimiter line at the start of `rest`, its line break included, or `None`
/// when the line is anything but exactly `---` (a trailing `\r` is allowed).
fn delimiter_len(rest: &[u8]) -> Option<usize> {
    match rest {
        [b'-', b'-', b'-'] | [b'-', b'-', b'-', b'\r'] => Some(rest.len()),
        [b'-', b'-', b'-', b'\n', ..] => Some(4),
        [b'-', b'-', b'-', b'\r', b'\n', ..] => Some(5),
        _ => None,
    }
}

/// Cuts `input` at its delimiter lines. Looks at no more than the first
/// [`FRONTMATTER_MAX_BYTES`] (plus delimiter slack) of the input, whatever its length.
pub(crate) fn split(input: &[u8]) -> Result<Split<'_>, SplitError> {
    let bom = if input.starts_with(BOM) { BOM.len() } else { 0 };
    let bytes = &input[bom..];
    let open = delimiter_len(bytes).ok_or(SplitError::Missing)?;
    let start = open;
    let limit = start + FRONTMATTER_MAX_BYTES;
    let search_end = bytes.len().min(limit + 1);
    let mut line_start = start;
    loop {
        if let Some(close) = delimiter_len(&bytes[line_start..]) {
            let body_start = line_start + close;
            return Ok(Split {
                frontmatter: &bytes[start..line_start],
                frontmatter_offset: bom + start,
                body: &bytes[body_start..],
                body_offset: bom + body_start,
            });
        }
        let Some(window) = bytes.get(line_start..search_end) else {
            break;
        };
        let Some(newline) = window.iter().position(|&b| b == b'\n') else {
            break;
        };
        line_start += newline + 1;
        if line_start > limit {
            return Err(SplitError::TooLarge);
        }
    }
    if bytes.len() > limit {
        Err(SplitError::TooLarge)
    } else {
        Err(SplitError::Unterminated)
    }
}

/// The body of a whole `SKILL.md` held in memory (a built-in skill, say): the Markdown after the
/// closing `---` line, trimmed. `None` when the text has no well-formed frontmatter.
///
/// This does not validate the frontmatter; run [`crate::parse_skill`] for that.
pub fn split_body(text: &str) -> Option<&str> {
    let split = split(text.as_bytes()).ok()?;
    // The body starts right after an ASCII line break (or at the end), so it is a char boundary.
    text.get(split.body_offset..).map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fm(input: &str) -> Result<(String, String), SplitError> {
        split(input.as_bytes()).map(|s| {
            (
                String::from_utf8_lossy(s.frontmatter).into_owned(),
                String::from_utf8_lossy(s.body).into_owned(),
            )
        })
    }

    #[test]
    fn splits_at_exact_delimiter_lines() {
        let (f, b) = fm("---\nname: a\n---\nbody\n").unwrap();
        assert_eq!(f, "name: a\n");
        assert_eq!(b, "body\n");
    }

    #[test]
    fn accepts_crlf_and_bom() {
        let (f, b) = fm("\u{feff}---\r\nname: a\r\n---\r\nbody\r\n").unwrap();
        assert_eq!(f, "name: a\r\n");
        assert_eq!(b, "body\r\n");
        let s = split("\u{feff}---\n---\nx".as_bytes()).unwrap();
        assert_eq!(s.frontmatter_offset, 7);
        assert_eq!(s.body_offset, 11);
    }

    #[test]
    fn closing_line_may_end_the_file() {
        let (f, b) = fm("---\nname: a\n---").unwrap();
        assert_eq!((f.as_str(), b.as_str()), ("name: a\n", ""));
        let (f, _) = fm("---\nname: a\n---\r").unwrap();
        assert_eq!(f, "name: a\n");
        let (f, _) = fm("---\n---\n").unwrap();
        assert_eq!(f, "");
    }

    #[test]
    fn only_an_exact_line_closes() {
        for almost in ["----", "--- #c", " ---", "---x", "--- ", "-- -"] {
            let input = format!("---\nname: a\n{almost}\nmore: b\n");
            assert_eq!(fm(&input), Err(SplitError::Unterminated), "{almost:?}");
        }
        let (f, _) = fm("---\ndescription: a --- b\nx: |\n  ---\n---\n").unwrap();
        assert_eq!(f, "description: a --- b\nx: |\n  ---\n");
    }

    #[test]
    fn body_dashes_do_not_matter() {
        let (_, b) = fm("---\nname: a\n---\nintro\n---\nmore\n").unwrap();
        assert_eq!(b, "intro\n---\nmore\n");
    }

    #[test]
    fn missing_and_unterminated() {
        for missing in [
            "",
            "\n---\n",
            "name: a\n",
            "----\n---\n",
            "--- \n---\n",
            "  ---\n",
        ] {
            assert_eq!(fm(missing), Err(SplitError::Missing), "{missing:?}");
        }
        for open in ["---", "---\n", "---\r\n", "---\nname: a\n"] {
            assert_eq!(fm(open), Err(SplitError::Unterminated), "{open:?}");
        }
    }

    #[test]
    fn cap_is_exact() {
        // A frontmatter of exactly the cap is accepted; one byte more is not.
        let line = "#".repeat(FRONTMATTER_MAX_BYTES - 1) + "\n";
        let ok = format!("---\n{line}---\n");
        assert_eq!(
            split(ok.as_bytes()).unwrap().frontmatter.len(),
            FRONTMATTER_MAX_BYTES
        );
        let over = format!("---\n#{line}---\n");
        assert_eq!(split(over.as_bytes()).err(), Some(SplitError::TooLarge));
        let unterminated_huge = format!("---\n{}", "a".repeat(3 * FRONTMATTER_MAX_BYTES));
        assert_eq!(
            split(unterminated_huge.as_bytes()).err(),
            Some(SplitError::TooLarge)
        );
    }

    #[test]
    fn split_body_trims() {
        assert_eq!(
            split_body("---\nname: a\n---\n\n  # Title\n\n"),
            Some("# Title")
        );
        assert_eq!(split_body("no frontmatter"), None);
        assert_eq!(split_body("\u{feff}---\r\n---\r\nbody"), Some("body"));
    }
}
