//! Words for the tool search: names and descriptions cut into lower-case terms, with the
//! optional light stemming and stop words of rho's ranking, and the plain rule of the baseline.

/// How text becomes terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TextRules {
    /// Split inside a word at camelCase and letter/digit boundaries (`getHTTPStatus2` →
    /// `get http status 2`); text is always split at everything that is not a letter or digit.
    pub(super) split_case_and_digits: bool,
    /// Reduce English inflections (`files` → `file`, `created` → `creat`), see [`stem`].
    pub(super) stemming: bool,
    /// Leave out English function words (see [`is_stop_word`]).
    pub(super) stop_words: bool,
}

impl TextRules {
    /// The baseline's rule: lower case, split at non-alphanumerics, nothing else.
    pub(super) const PLAIN: Self = Self {
        split_case_and_digits: false,
        stemming: false,
        stop_words: false,
    };
}

/// Calls `each` with every term of `text` in order. `word` is scratch space, so a caller that
/// cuts many texts allocates once.
pub(super) fn terms(text: &str, rules: TextRules, word: &mut String, mut each: impl FnMut(&str)) {
    let mut chars = text.chars().peekable();
    word.clear();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            emit(word, rules, &mut each);
            prev = None;
            continue;
        }
        if rules.split_case_and_digits
            && let Some(p) = prev
            && boundary(p, c, chars.peek().copied())
        {
            emit(word, rules, &mut each);
        }
        if c.is_ascii() {
            word.push(c.to_ascii_lowercase());
        } else {
            word.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    emit(word, rules, &mut each);
}

/// Whether a word ends between `prev` and `c` (`next` follows `c`): `fooBar`, `HTTPServer`
/// (before `S`), `v2`, `2d`.
fn boundary(prev: char, c: char, next: Option<char>) -> bool {
    (prev.is_lowercase() && c.is_uppercase())
        || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
        || (prev.is_alphabetic() && c.is_numeric())
        || (prev.is_numeric() && c.is_alphabetic())
}

fn emit(word: &mut String, rules: TextRules, each: &mut impl FnMut(&str)) {
    if word.is_empty() {
        return;
    }
    if !(rules.stop_words && is_stop_word(word)) {
        if rules.stemming {
            each(stem(word));
        } else {
            each(word);
        }
    }
    word.clear();
}

/// English function words and the filler of requests (`please`, `can`, `my`): they carry no
/// meaning a tool's name or description could match, yet are rare enough in descriptions that
/// BM25 would weigh them. Kept small: words that name an action or an object stay.
pub(super) fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "about"
            | "an"
            | "and"
            | "any"
            | "are"
            | "as"
            | "at"
            | "be"
            | "been"
            | "but"
            | "by"
            | "can"
            | "could"
            | "did"
            | "do"
            | "does"
            | "for"
            | "from"
            | "had"
            | "has"
            | "have"
            | "he"
            | "her"
            | "his"
            | "how"
            | "i"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "me"
            | "my"
            | "of"
            | "on"
            | "or"
            | "our"
            | "please"
            | "s"
            | "she"
            | "should"
            | "so"
            | "t"
            | "than"
            | "that"
            | "the"
            | "their"
            | "them"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "those"
            | "to"
            | "us"
            | "was"
            | "we"
            | "were"
            | "what"
            | "when"
            | "where"
            | "which"
            | "who"
            | "whom"
            | "why"
            | "will"
            | "with"
            | "would"
            | "you"
            | "your"
    )
}

/// Light English stemming: plural `-s`/`-es`/`-ies`, `-ing`, `-ed`/`-ied`, then a final `-e`,
/// so `create`, `creates`, `created` and `creating` all become `creat`. Only ASCII words of
/// four letters or more change, and a stem keeps at least three letters and a vowel (so
/// `string` and `bus` stay whole). Query and documents go through the same rule, so what
/// matters is that inflections meet, not that stems are words.
fn stem(word: &mut String) -> &str {
    if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return word;
    }
    let keep = |stem: &str| stem.len() >= 3 && stem.bytes().any(is_vowel);
    if let Some(base) = word
        .strip_suffix("ies")
        .or_else(|| word.strip_suffix("ied"))
    {
        if base.len() >= 2 {
            let cut = base.len();
            word.truncate(cut);
            word.push('y');
            return word;
        }
    } else if let Some(base) = word.strip_suffix("sses") {
        let cut = base.len() + 2;
        word.truncate(cut);
    } else if ["ches", "shes", "xes", "zes"]
        .iter()
        .any(|suffix| word.ends_with(suffix))
    {
        let cut = word.len() - 2;
        word.truncate(cut);
    } else if word.ends_with('s') && !["ss", "us", "is"].iter().any(|s| word.ends_with(s)) {
        let cut = word.len() - 1;
        word.truncate(cut);
    } else if let Some(base) = word.strip_suffix("ing").or_else(|| word.strip_suffix("ed"))
        && keep(base)
    {
        let cut = base.len();
        word.truncate(cut);
        undouble(word);
    }
    if word.len() >= 4 && word.ends_with('e') {
        word.pop();
    }
    word
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// `mapp` → `map`, `tagg` → `tag` (but `fill`, `pass`, `buzz` stay).
fn undouble(word: &mut String) {
    let bytes = word.as_bytes();
    if let [.., a, b] = bytes
        && a == b
        && !is_vowel(*a)
        && !matches!(a, b'l' | b's' | b'z')
    {
        word.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RHO: TextRules = TextRules {
        split_case_and_digits: true,
        stemming: false,
        stop_words: false,
    };

    fn cut(text: &str, rules: TextRules) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, rules, &mut String::new(), |t| out.push(t.to_owned()));
        out
    }

    #[test]
    fn names_split_at_every_convention() {
        assert_eq!(
            cut("create_pull_request", RHO),
            ["create", "pull", "request"]
        );
        assert_eq!(cut("get-resource-links", RHO), ["get", "resource", "links"]);
        assert_eq!(cut("listPullRequests", RHO), ["list", "pull", "requests"]);
        assert_eq!(cut("parseHTTPResponse", RHO), ["parse", "http", "response"]);
        assert_eq!(cut("API-post-search", RHO), ["api", "post", "search"]);
        assert_eq!(
            cut("base64 v2Api a11y", RHO),
            ["base", "64", "v", "2", "api", "a", "11", "y"]
        );
        assert_eq!(
            cut("mcp__github__create_issue", RHO),
            ["mcp", "github", "create", "issue"]
        );
        assert_eq!(
            cut("src/lib.rs path.to.file", RHO),
            ["src", "lib", "rs", "path", "to", "file"]
        );
        assert_eq!(
            cut("Ünïcode ÉCOLE straße", RHO),
            ["ünïcode", "école", "straße"]
        );
        // The baseline splits only at non-alphanumerics.
        assert_eq!(
            cut("listPullRequests get_env v2", TextRules::PLAIN),
            ["listpullrequests", "get", "env", "v2"]
        );
    }

    #[test]
    fn stems_meet_across_inflections() {
        let all = TextRules {
            stemming: true,
            ..RHO
        };
        let stems = |words: &str| cut(words, all);
        let same = |words: &str| {
            let got = stems(words);
            assert!(got.windows(2).all(|w| w[0] == w[1]), "{words}: {got:?}");
        };
        same("create creates created creating");
        same("file files filed");
        same("tag tags tagged tagging");
        same("stage staged staging stages");
        same("entity entities");
        same("search searches searched searching");
        same("index indexes indexed");
        same("modify modifies modified");
        same("map maps mapped mapping");
        assert_eq!(
            stems("string status bus analysis fill"),
            ["string", "status", "bus", "analysis", "fill"]
        );
        assert_eq!(stems("use uses sql"), ["use", "use", "sql"]);
    }

    #[test]
    fn stop_words_go_when_asked() {
        let rules = TextRules {
            stop_words: true,
            ..RHO
        };
        assert_eq!(cut("what's the time in Tokyo", rules), ["time", "tokyo"]);
        assert_eq!(cut("what's the time", RHO), ["what", "s", "the", "time"]);
    }

    #[test]
    fn odd_text_never_panics() {
        for text in [
            "",
            " ",
            "___",
            "İ̇",
            "\u{0}",
            "ǅungla",
            "🦀🦀",
            "aA1_-./",
            &"x".repeat(10_000),
        ] {
            for stemming in [false, true] {
                let rules = TextRules {
                    stemming,
                    stop_words: true,
                    ..RHO
                };
                let _ = cut(text, rules);
            }
        }
    }
}
