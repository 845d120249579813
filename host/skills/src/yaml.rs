//! The restricted YAML reader for frontmatter: a small tree built from the parser's event
//! stream, refusing anchors, aliases, tags, flow collections and deep nesting as it goes.
//!
//! The event stream comes from `granit-parser`, the parser behind `serde-saphyr` (re-exported as
//! `serde_saphyr::granit_parser`). Building the tree ourselves, without recursion, lets us stop
//! at the first forbidden construct (an alias bomb never expands), keep scalars as written (so
//! `version: 1.0` in `metadata` stays `"1.0"`) and report every field problem, not only the first.

use serde_saphyr::granit_parser::{
    Event, Options, Parser, ScalarStyle, ScanError, StrInput, StructureStyle,
};

/// The deepest nesting accepted: the root mapping, `metadata`, and one level to spare so a
/// nested value is reported as a field problem rather than a YAML one.
pub(crate) const MAX_DEPTH: usize = 3;

/// A YAML node as far as frontmatter needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    /// A scalar, with its text after YAML escape processing and folding.
    Scalar(Scalar),
    /// A mapping with scalar keys, in source order (duplicates kept for the validator to report).
    Mapping(Vec<Entry>),
    /// A block sequence. Its items never matter: no field may be a sequence.
    Sequence,
}

/// A scalar and whether it was written plain (unquoted, not a block scalar).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scalar {
    pub text: String,
    pub plain: bool,
}

/// One `key: value` pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: String,
    /// 1-based line of the key within the YAML text.
    pub line: usize,
    pub value: Node,
}

/// What a plain scalar would be under the YAML core schema (plus YAML 1.1 booleans, which
/// common YAML libraries still resolve).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    String,
    Null,
    Bool,
    Int,
    Float,
}

impl ScalarKind {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::String => "a string",
            Self::Null => "null",
            Self::Bool => "a boolean",
            Self::Int => "an integer",
            Self::Float => "a number",
        }
    }
}

impl Scalar {
    /// The scalar's type. Quoted and block scalars are always strings.
    pub(crate) fn kind(&self) -> ScalarKind {
        if !self.plain {
            return ScalarKind::String;
        }
        resolve_plain(&self.text)
    }
}

fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => ScalarKind::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "yes" | "Yes" | "YES" | "no"
        | "No" | "NO" | "on" | "On" | "ON" | "off" | "Off" | "OFF" => ScalarKind::Bool,
        _ if is_int(text) => ScalarKind::Int,
        _ if is_float(text) => ScalarKind::Float,
        _ => ScalarKind::String,
    }
}

fn digits(s: &str, radix: u32) -> bool {
    s.starts_with(|c: char| c.is_digit(radix)) && s.chars().all(|c| c == '_' || c.is_digit(radix))
}

fn unsigned(s: &str) -> &str {
    s.strip_prefix(['-', '+']).unwrap_or(s)
}

fn is_int(text: &str) -> bool {
    let s = unsigned(text);
    if let Some(hex) = s.strip_prefix("0x") {
        return digits(hex, 16);
    }
    if let Some(oct) = s.strip_prefix("0o") {
        return digits(oct, 8);
    }
    if let Some(bin) = s.strip_prefix("0b") {
        return digits(bin, 2);
    }
    digits(s, 10)
}

fn is_float(text: &str) -> bool {
    let s = unsigned(text);
    if matches!(s, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((int, frac)) => {
            (int.is_empty() || digits(int, 10))
                && (frac.is_empty() || digits(frac, 10))
                && !(int.is_empty() && frac.is_empty())
        }
        None => digits(mantissa, 10),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = unsigned(e);
        !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

/// A YAML problem: a syntax error or a forbidden construct, at a 1-based line of the YAML text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub line: usize,
    pub message: String,
}

impl YamlError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }

    fn scan(error: &ScanError) -> Self {
        let mut message = error.info();
        if message.is_empty() {
            message = "syntax error".to_owned();
        }
        Self::new(error.marker().line().max(1), lower_first(message))
    }
}

fn lower_first(message: String) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) if first.is_uppercase() => first.to_lowercase().chain(chars).collect(),
        _ => message,
    }
}

/// A collection being built.
enum Frame {
    Mapping {
        entries: Vec<Entry>,
        pending_key: Option<(String, usize)>,
    },
    Sequence,
}

fn parser_options() -> Options {
    let mut options = Options::default();
    // Our own depth check stops far earlier; these keep the parser's own state small too.
    options.block_nesting_limit = 16;
    options.flow_nesting_limit = 16;
    options.set_emit_comments(false);
    options.emit_anchor_events = true;
    options
}

/// Parses `text` (the frontmatter, already capped) into a tree. `Ok(None)` means the text holds
/// no YAML document at all (empty, or only comments).
pub(crate) fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    let mut parser = Parser::new_from_str_with_options(text, parser_options());
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| YamlError::scan(&e))?;
        let line = span.start.line().max(1);
        let node = match event {
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError::new(
                        line,
                        "the frontmatter must be a single yaml document",
                    ));
                }
                continue;
            }
            Event::Alias(_) | Event::UnresolvedAlias(_) => {
                return Err(YamlError::new(line, "aliases (`*name`) are not allowed"));
            }
            Event::Scalar(text, style, anchor, tag) => {
                forbid_properties(&mut parser, anchor, tag.is_some(), line)?;
                let plain = style == ScalarStyle::Plain;
                // The parser reports an empty plain scalar (`key:` with nothing after it) as
                // `~`; keep what was written, so the two stay distinguishable.
                let empty = plain && span.start.index() == span.end.index();
                Node::Scalar(Scalar {
                    text: if empty {
                        String::new()
                    } else {
                        text.into_owned()
                    },
                    plain,
                })
            }
            Event::MappingStart(style, anchor, tag) => {
                forbid_properties(&mut parser, anchor, tag.is_some(), line)?;
                if style == StructureStyle::Flow {
                    return Err(YamlError::new(
                        line,
                        "flow-style mappings (`{...}`) are not allowed; use block style",
                    ));
                }
                push_frame(
                    &mut stack,
                    line,
                    Frame::Mapping {
                        entries: Vec::new(),
                        pending_key: None,
                    },
                )?;
                continue;
            }
            Event::SequenceStart(style, anchor, tag) => {
                forbid_properties(&mut parser, anchor, tag.is_some(), line)?;
                if style == StructureStyle::Flow {
                    return Err(YamlError::new(
                        line,
                        "flow-style sequences (`[...]`) are not allowed",
                    ));
                }
                push_frame(&mut stack, line, Frame::Sequence)?;
                continue;
            }
            Event::MappingEnd | Event::SequenceEnd => match stack.pop() {
                Some(Frame::Mapping { entries, .. }) => Node::Mapping(entries),
                Some(Frame::Sequence) => Node::Sequence,
                None => return Err(YamlError::new(line, "unbalanced collection end")),
            },
            _ => continue,
        };
        attach(&mut stack, &mut root, node, line)?;
    }
    Ok(root)
}

fn forbid_properties<'a>(
    parser: &mut Parser<'a, StrInput<'a>>,
    anchor: usize,
    tagged: bool,
    line: usize,
) -> Result<(), YamlError> {
    if anchor != 0 {
        // The anchor event that follows carries the line of the `&name` itself.
        let line = match parser.next_event() {
            Some(Ok((Event::Anchor(..), span))) => span.start.line().max(1),
            _ => line,
        };
        return Err(YamlError::new(line, "anchors (`&name`) are not allowed"));
    }
    if tagged {
        return Err(YamlError::new(
            line,
            "tags (`!tag`, `!!type`) are not allowed",
        ));
    }
    Ok(())
}

fn push_frame(stack: &mut Vec<Frame>, line: usize, frame: Frame) -> Result<(), YamlError> {
    if stack.len() >= MAX_DEPTH {
        return Err(YamlError::new(
            line,
            format!("the frontmatter nests deeper than {MAX_DEPTH} levels"),
        ));
    }
    stack.push(frame);
    Ok(())
}

fn attach(
    stack: &mut [Frame],
    root: &mut Option<Node>,
    node: Node,
    line: usize,
) -> Result<(), YamlError> {
    match stack.last_mut() {
        None => {
            if root.is_some() {
                return Err(YamlError::new(
                    line,
                    "the frontmatter must be a single yaml document",
                ));
            }
            *root = Some(node);
        }
        Some(Frame::Sequence) => {}
        Some(Frame::Mapping {
            entries,
            pending_key,
        }) => match pending_key.take() {
            Some((key, key_line)) => entries.push(Entry {
                key,
                line: key_line,
                value: node,
            }),
            None => match node {
                Node::Scalar(scalar) => *pending_key = Some((scalar.text, line)),
                _ => return Err(YamlError::new(line, "mapping keys must be scalars")),
            },
        },
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(text: &str, plain: bool) -> Node {
        Node::Scalar(Scalar {
            text: text.into(),
            plain,
        })
    }

    fn err(text: &str) -> YamlError {
        match parse(text) {
            Err(e) => e,
            Ok(tree) => panic!("{text:?} parsed: {tree:?}"),
        }
    }

    #[test]
    fn empty_plain_scalars_stay_empty() {
        let Some(Node::Mapping(entries)) = parse("a:\nb: ~\nc: ''\n").unwrap() else {
            panic!("not a mapping")
        };
        assert_eq!(entries[0].value, scalar("", true));
        assert_eq!(entries[1].value, scalar("~", true));
        assert_eq!(entries[2].value, scalar("", false));
    }

    #[test]
    fn builds_a_tree_with_styles() {
        let tree = parse("a: b\nc: 'd'\ne:\n  f: |\n    g\n").unwrap().unwrap();
        let Node::Mapping(entries) = tree else {
            panic!("not a mapping")
        };
        assert_eq!(entries[0].key, "a");
        assert_eq!(entries[0].value, scalar("b", true));
        assert_eq!(entries[1].value, scalar("d", false));
        assert_eq!(entries[2].line, 3);
        let Node::Mapping(inner) = &entries[2].value else {
            panic!("not a mapping")
        };
        assert_eq!(inner[0].value, scalar("g\n", false));
    }

    #[test]
    fn empty_and_comment_only_yield_no_document() {
        assert_eq!(parse("").unwrap(), None);
        assert_eq!(parse("# just a comment\n").unwrap(), None);
    }

    #[test]
    fn keeps_duplicates_for_the_validator() {
        let Some(Node::Mapping(entries)) = parse("a: 1\na: 2\n").unwrap() else {
            panic!("not a mapping")
        };
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn refuses_anchors_aliases_tags_and_flow() {
        assert!(err("a: &x b\n").message.contains("anchors"));
        assert!(err("a: &x [*x]\n").message.contains("anchors"));
        assert!(err("a: !!str b\n").message.contains("tags"));
        assert!(err("a: !!binary aGk=\n").message.contains("tags"));
        assert!(
            err("a: !!python/object:os.system x\n")
                .message
                .contains("tags")
        );
        assert!(err("a: !foo x\n").message.contains("tags"));
        assert!(err("a: {b: c}\n").message.contains("flow-style mappings"));
        assert!(err("a: [b]\n").message.contains("flow-style sequences"));
        assert!(err("a: *x\n").line >= 1);
        let e = err("a: b\nc: &anchor\n  d: e\n");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn refuses_deep_block_nesting_and_complex_keys() {
        assert!(
            err("a:\n  b:\n    c:\n      d: e\n")
                .message
                .contains("deeper")
        );
        assert!(err("- - - - - - - - x\n").message.contains("deeper"));
        assert!(err("? a: b\n: c\n").message.contains("keys"));
    }

    #[test]
    fn refuses_multiple_documents_and_reports_syntax_lines() {
        assert!(err("a: b\n...\nc: d\n").message.contains("single"));
        let e = err("a: b\nc: d: e\n");
        assert_eq!(e.line, 2);
        assert!(!e.message.is_empty());
        assert!(!e.message.starts_with(char::is_uppercase));
    }

    #[test]
    fn resolves_plain_scalars() {
        use ScalarKind::*;
        let cases = [
            ("", Null),
            ("~", Null),
            ("null", Null),
            ("NULL", Null),
            ("yes", Bool),
            ("No", Bool),
            ("TRUE", Bool),
            ("off", Bool),
            ("123", Int),
            ("-7", Int),
            ("0x1F", Int),
            ("0o17", Int),
            ("1_000", Int),
            ("1.0", Float),
            ("-.5", Float),
            ("1e3", Float),
            ("1.5E-3", Float),
            (".inf", Float),
            ("-.Inf", Float),
            (".nan", Float),
            ("y", String),
            ("n", String),
            ("yess", String),
            ("1-2", String),
            ("2024-report", String),
            ("1.2.3", String),
            (".", String),
            ("e3", String),
            ("1e", String),
            ("0x", String),
            ("pdf", String),
            ("-", String),
            ("nan", String),
        ];
        for (text, kind) in cases {
            let s = Scalar {
                text: text.into(),
                plain: true,
            };
            assert_eq!(s.kind(), kind, "{text:?}");
            let quoted = Scalar {
                text: text.into(),
                plain: false,
            };
            assert_eq!(quoted.kind(), String, "{text:?} quoted");
        }
    }
}
