//! BM25F over a tool's fields (its name, its server, its parameter names, its description):
//! the one scorer behind rho's ranking and the plain BM25 baseline, which puts everything in
//! one field.
//!
//! A term's frequency in each field is normalised by that field's length against the field's
//! average, weighted, summed, then saturated once (`tf / (k1 + tf)`) and multiplied by the
//! term's inverse document frequency (Robertson and Zaragoza, "The Probabilistic Relevance
//! Framework: BM25 and Beyond", 2009, section 3.5). Everything but the query is computed when
//! the index is built: a search only adds up precomputed weights.

use std::collections::HashMap;

use super::text::{self, TextRules};

/// The fields of a tool, in [`Fields`] order.
pub(super) const FIELDS: usize = 4;

/// One text per field: the tool's own name, its server, its parameter names, its description.
pub(super) type Fields<'a> = [&'a str; FIELDS];

/// How much a field counts and how much its length matters (`b`: 0 none, 1 fully).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct FieldParams {
    pub(super) weight: f64,
    pub(super) b: f64,
}

/// BM25's term-frequency saturation: the usual 1.2.
const K1: f64 = 1.2;

/// Terms read from one field at most: descriptions of thousands of words say nothing a search
/// needs beyond their start, and the build stays bounded whatever a server sends.
const MAX_FIELD_TERMS: usize = 2_000;

/// The built index: term ids, and per term the documents holding it with their saturated
/// weights, all in one array (`weights[starts[t]..starts[t + 1]]` for term `t`).
#[derive(Debug, Default)]
pub(super) struct Postings {
    ids: HashMap<String, u32>,
    starts: Vec<usize>,
    /// (document, `tf / (k1 + tf)` with `tf` the weighted, normalised frequency).
    weights: Vec<(u32, f32)>,
    idf: Vec<f64>,
}

impl Postings {
    /// Indexes `docs` (one [`Fields`] each) under `rules` and `params`.
    pub(super) fn build<'a>(
        docs: impl ExactSizeIterator<Item = Fields<'a>>,
        rules: TextRules,
        params: &[FieldParams; FIELDS],
    ) -> Self {
        let mut postings = Self::default();
        let count = docs.len();
        // Every document's distinct terms with their count per field, one document after the
        // other (`first[d]..first[d + 1]`), and each document's field lengths.
        let mut entries: Vec<(u32, [u16; FIELDS])> = Vec::new();
        let mut first: Vec<usize> = Vec::with_capacity(count + 1);
        let mut lengths: Vec<[u32; FIELDS]> = Vec::with_capacity(count);
        // Per term: the last document that held it and its entry there.
        let mut last: Vec<(u32, usize)> = Vec::new();
        let mut word = String::new();
        for (doc, fields) in docs.enumerate() {
            let doc = doc as u32;
            first.push(entries.len());
            let mut length = [0u32; FIELDS];
            for (field, text) in fields.iter().enumerate() {
                if params[field].weight <= 0.0 {
                    continue;
                }
                let mut taken = 0usize;
                text::terms(text, rules, &mut word, |term| {
                    if taken == MAX_FIELD_TERMS {
                        return;
                    }
                    taken += 1;
                    let id = postings.intern(term);
                    if last.len() <= id as usize {
                        last.resize(id as usize + 1, (u32::MAX, 0));
                    }
                    let (seen_in, at) = &mut last[id as usize];
                    if *seen_in != doc {
                        *seen_in = doc;
                        *at = entries.len();
                        entries.push((id, [0; FIELDS]));
                    }
                    if let Some((_, counts)) = entries.get_mut(*at) {
                        counts[field] = counts[field].saturating_add(1);
                    }
                });
                length[field] = taken as u32;
            }
            lengths.push(length);
        }
        first.push(entries.len());

        let mut average = [0f64; FIELDS];
        for length in &lengths {
            for (sum, len) in average.iter_mut().zip(length) {
                *sum += f64::from(*len);
            }
        }
        for sum in &mut average {
            *sum /= count.max(1) as f64;
        }

        // Lay the postings out by term: count, then place.
        let terms = postings.ids.len();
        let mut starts = vec![0usize; terms + 1];
        for (term, _) in &entries {
            starts[*term as usize + 1] += 1;
        }
        for t in 0..terms {
            starts[t + 1] += starts[t];
        }
        let mut next = starts.clone();
        let mut weights = vec![(0u32, 0f32); entries.len()];
        for (doc, length) in lengths.iter().enumerate() {
            let mut norm = [1f64; FIELDS];
            for field in 0..FIELDS {
                if average[field] > 0.0 {
                    let b = params[field].b;
                    norm[field] = (1.0 - b) + b * f64::from(length[field]) / average[field];
                }
            }
            for (term, counts) in &entries[first[doc]..first[doc + 1]] {
                let tf: f64 = (0..FIELDS)
                    .map(|f| params[f].weight * f64::from(counts[f]) / norm[f])
                    .sum();
                let slot = &mut next[*term as usize];
                weights[*slot] = (doc as u32, (tf / (K1 + tf)) as f32);
                *slot += 1;
            }
        }
        let n = count as f64;
        postings.idf = starts
            .windows(2)
            .map(|w| {
                let df = (w[1] - w[0]) as f64;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        postings.starts = starts;
        postings.weights = weights;
        postings
    }

    fn intern(&mut self, term: &str) -> u32 {
        if let Some(id) = self.ids.get(term) {
            return *id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(term.to_owned(), id);
        id
    }

    /// The id of `term`, when some document holds it.
    pub(super) fn id(&self, term: &str) -> Option<u32> {
        self.ids.get(term).copied()
    }

    /// Adds `weight` × the BM25F score of `term` to each document's entry in `scores`.
    pub(super) fn add(&self, term: u32, weight: f64, scores: &mut [f64]) {
        let term = term as usize;
        let (Some(&start), Some(&end), Some(idf)) = (
            self.starts.get(term),
            self.starts.get(term + 1),
            self.idf.get(term),
        ) else {
            return;
        };
        for &(doc, saturated) in self.weights.get(start..end).unwrap_or_default() {
            if let Some(score) = scores.get_mut(doc as usize) {
                *score += weight * idf * f64::from(saturated);
            }
        }
    }
}
