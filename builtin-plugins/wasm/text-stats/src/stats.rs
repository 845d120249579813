//! The measurements of one text: counts, the longest line, word frequencies.

use std::collections::HashMap;

use serde::Serialize;

/// How to count.
pub(crate) struct Options {
    /// Most frequent words to keep.
    pub top: usize,
    /// Whether `Word` and `word` differ.
    pub case_sensitive: bool,
    /// Shortest word (in characters) the frequency list counts.
    pub min_word_length: usize,
}

/// Lines between two cancellation checks.
const CHECK_EVERY: usize = 4096;

/// Everything `text_stats` reports about a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Lines, counted as `str::lines` does (a last line without a newline counts).
    pub lines: usize,
    /// Lines holding only whitespace.
    pub blank_lines: usize,
    /// Whitespace-separated words (as `wc -w`).
    pub words: usize,
    /// Distinct words of the frequency count.
    pub unique_words: usize,
    /// Unicode scalar values.
    pub characters: usize,
    /// UTF-8 bytes.
    pub bytes: usize,
    /// The first longest line, if the text has a line.
    pub longest_line: Option<LongestLine>,
    /// The most frequent words, most frequent first, ties in alphabetical order.
    pub top_words: Vec<TopWord>,
}

/// The longest line of a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LongestLine {
    /// Its 1-based number.
    pub line: usize,
    /// Its length in characters (without the line break).
    pub characters: usize,
}

/// A word and how often it occurs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopWord {
    /// The word (case-folded unless counting case-sensitively).
    pub word: String,
    /// Occurrences.
    pub count: usize,
}

impl Stats {
    /// Measures `text`; `None` once `cancelled` answers `true` (asked every few thousand lines).
    pub(crate) fn measure(
        text: &str,
        options: &Options,
        cancelled: impl Fn() -> bool,
    ) -> Option<Self> {
        let mut stats = Stats {
            lines: 0,
            blank_lines: 0,
            words: 0,
            unique_words: 0,
            characters: 0,
            bytes: text.len(),
            longest_line: None,
            top_words: Vec::new(),
        };
        let mut counts: HashMap<String, usize> = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            if index % CHECK_EVERY == 0 && cancelled() {
                return None;
            }
            stats.lines += 1;
            if line.trim().is_empty() {
                stats.blank_lines += 1;
            }
            let characters = line.chars().count();
            if stats.longest_line.is_none_or(|l| characters > l.characters) {
                stats.longest_line = Some(LongestLine {
                    line: index + 1,
                    characters,
                });
            }
            stats.words += line.split_whitespace().count();
            for word in frequency_words(line) {
                if word.chars().count() < options.min_word_length {
                    continue;
                }
                let word = if options.case_sensitive {
                    word.to_owned()
                } else {
                    word.to_lowercase()
                };
                *counts.entry(word).or_default() += 1;
            }
        }
        if cancelled() {
            return None;
        }
        stats.characters = text.chars().count();
        stats.unique_words = counts.len();
        let mut ranked: Vec<(String, usize)> = counts.into_iter().collect();
        ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        stats.top_words = ranked
            .into_iter()
            .take(options.top)
            .map(|(word, count)| TopWord { word, count })
            .collect();
        Some(stats)
    }

    /// The text the model reads.
    pub(crate) fn summary(&self, source: &str) -> String {
        let mut out = format!(
            "{source}: lines: {} ({} blank), words: {}, characters: {}, bytes: {}",
            self.lines, self.blank_lines, self.words, self.characters, self.bytes
        );
        if let Some(longest) = self.longest_line {
            out.push_str(&format!(
                "\nlongest line: {} ({} characters)",
                longest.line, longest.characters
            ));
        }
        if !self.top_words.is_empty() {
            let words: Vec<String> = self
                .top_words
                .iter()
                .map(|w| format!("{} ({})", w.word, w.count))
                .collect();
            out.push_str(&format!(
                "\nmost frequent of {} distinct words: {}",
                self.unique_words,
                words.join(", ")
            ));
        }
        out
    }
}

/// Words of the frequency count: runs of letters, digits and `_`, which may be joined by an
/// apostrophe or a hyphen between two such characters (`don't`, `well-known`).
fn frequency_words(line: &str) -> impl Iterator<Item = &str> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let is_joiner = |c: char| matches!(c, '\'' | '\u{2019}' | '-');
    let mut rest = line;
    std::iter::from_fn(move || {
        let start = rest.find(is_word)?;
        rest = &rest[start..];
        let mut end = 0;
        let mut chars = rest.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if is_word(c) {
                end = i + c.len_utf8();
            } else if is_joiner(c) && chars.peek().is_some_and(|&(_, next)| is_word(next)) {
                continue;
            } else {
                break;
            }
        }
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn options() -> Options {
        Options {
            top: 3,
            case_sensitive: false,
            min_word_length: 1,
        }
    }

    #[test]
    fn words_keep_inner_joiners() {
        let words: Vec<&str> =
            frequency_words("Don't -- well-known, 'quoted' snake_case x-").collect();
        assert_eq!(words, ["Don't", "well-known", "quoted", "snake_case", "x"]);
    }

    #[test]
    fn counts_match_wc_and_unicode() {
        let s = Stats::measure("héllo wörld\n\n  \nlast line here", &options(), || false).unwrap();
        assert_eq!(s.lines, 4);
        assert_eq!(s.blank_lines, 2);
        assert_eq!(s.words, 5);
        assert_eq!(s.characters, 30);
        assert_eq!(s.bytes, 32);
        assert_eq!(
            s.longest_line,
            Some(LongestLine {
                line: 4,
                characters: 14
            })
        );
    }

    #[test]
    fn frequency_folds_case_and_filters_short_words() {
        let text = "The cat and the Cat and THE dog";
        let s = Stats::measure(text, &options(), || false).unwrap();
        let top: Vec<(&str, usize)> = s
            .top_words
            .iter()
            .map(|w| (w.word.as_str(), w.count))
            .collect();
        assert_eq!(top, [("the", 3), ("and", 2), ("cat", 2)]);
        let sensitive = Options {
            case_sensitive: true,
            min_word_length: 4,
            ..options()
        };
        let s = Stats::measure(text, &sensitive, || false).unwrap();
        assert!(s.top_words.is_empty());
        assert_eq!(s.unique_words, 0);
    }
}
