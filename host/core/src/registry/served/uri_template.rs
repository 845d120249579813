//! Whether a URI is one an RFC 6570 URI template expands to, for routing a read of a templated
//! resource to the server that offers the template (`rho mcp serve`).
//!
//! Each expression stands for any run of the characters its operator lets through: a simple
//! `{x}` no `/`, `?` or `#`; `{+x}` anything; `{#x}` `#` then anything; `{.x}`, `{;x}` their
//! prefix then no `/`, `?` or `#`; `{/x}` `/` then no `?` or `#`; `{?x}`, `{&x}` their prefix
//! then no `#`. Expressions with a prefix may expand to nothing. The match runs in time linear
//! in the URI per template part, whatever the template.

/// One part of a parsed template.
#[derive(Debug, PartialEq, Eq)]
enum Part<'a> {
    /// Text that must appear as it is.
    Literal(&'a str),
    /// An expression: its prefix character (then optional), and the characters its value may
    /// not hold.
    Expression {
        prefix: Option<u8>,
        stops: &'static [u8],
    },
}

/// Longest URI matched against templates; longer ones match none.
const MAX_URI_LEN: usize = 16 * 1024;

/// Whether `uri` is an expansion of `template`. A template that does not parse (an unclosed
/// `{`) matches nothing.
pub(super) fn matches(template: &str, uri: &str) -> bool {
    let Some(parts) = parse(template) else {
        return false;
    };
    if uri.len() > MAX_URI_LEN {
        return false;
    }
    let bytes = uri.as_bytes();
    // reachable[i]: the parts so far can produce exactly `uri[..i]`.
    let mut reachable = vec![false; bytes.len() + 1];
    reachable[0] = true;
    for part in parts {
        let mut next = vec![false; bytes.len() + 1];
        match part {
            Part::Literal(text) => {
                for (at, _) in reachable.iter().enumerate().filter(|(_, r)| **r) {
                    if bytes[at..].starts_with(text.as_bytes()) {
                        next[at + text.len()] = true;
                    }
                }
            }
            Part::Expression { prefix, stops } => {
                // Where a value may start: right here (no prefix), or after the prefix.
                let mut starts = vec![false; bytes.len() + 1];
                for (at, _) in reachable.iter().enumerate().filter(|(_, r)| **r) {
                    match prefix {
                        None => starts[at] = true,
                        Some(p) => {
                            next[at] = true;
                            if bytes.get(at) == Some(&p) {
                                starts[at + 1] = true;
                            }
                        }
                    }
                }
                // A value runs on from a start while its characters are allowed.
                let mut open = false;
                for at in 0..=bytes.len() {
                    open |= starts[at];
                    if open {
                        next[at] = true;
                    }
                    if bytes.get(at).is_some_and(|b| stops.contains(b)) {
                        open = false;
                    }
                }
            }
        }
        reachable = next;
    }
    reachable[bytes.len()]
}

/// The parts of `template`, or `None` when a `{` is not closed.
fn parse(template: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Part::Literal(&rest[..open]));
        }
        let close = rest[open..].find('}')? + open;
        let (prefix, stops): (Option<u8>, &'static [u8]) =
            match rest.as_bytes().get(open + 1).copied() {
                Some(b'+') => (None, b""),
                Some(b'#') => (Some(b'#'), b""),
                Some(op @ (b'.' | b';')) => (Some(op), b"/?#"),
                Some(b'/') => (Some(b'/'), b"?#"),
                Some(op @ (b'?' | b'&')) => (Some(op), b"#"),
                _ => (None, b"/?#"),
            };
        parts.push(Part::Expression { prefix, stops });
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Literal(rest));
    }
    Some(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_expressions_stop_at_slashes() {
        let t = "test://template/{id}/data";
        assert!(matches(t, "test://template/123/data"));
        assert!(!matches(t, "test://template/1/2/data"));
        assert!(!matches(t, "test://template/123/other"));
        assert!(!matches(t, "test://template/123/data/more"));
        assert!(matches("demo://r/{a}-{b}", "demo://r/x-y-z"));
    }

    #[test]
    fn operators_take_what_they_let_through() {
        assert!(matches("file:///{+path}", "file:///a/b/c.txt"));
        assert!(matches("x://s{/seg}", "x://s/a"));
        assert!(matches("x://s{/seg}", "x://s"));
        assert!(matches("x://s{?q,page}", "x://s?q=1&page=2"));
        assert!(matches("x://s{?q}", "x://s"));
        assert!(matches("x://s{#frag}", "x://s#top"));
        assert!(!matches("x://s{?q}", "x://t?q=1"));
    }

    #[test]
    fn broken_templates_and_huge_uris_match_nothing() {
        assert!(!matches("x://{id", "x://1"));
        let long = format!("x://{}", "a".repeat(MAX_URI_LEN));
        assert!(!matches("x://{+all}", &long));
        // Many expressions cost no more than a few passes.
        let many = "{a}".repeat(50);
        assert!(matches(&many, &"b".repeat(10_000)));
    }
}
