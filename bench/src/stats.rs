//! Order statistics over timed runs, the least-squares line through (plugins, median), and the
//! word a goal's line gives its verdict in.

use std::time::Duration;

/// The verdict on a goal, as every benchmark prints it: `met` or `NOT met`.
pub fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

/// Prints `rows` as the table of median, minimum and p90 (ms, `decimals` places) the benches
/// comparing two or more paths share, under a `path` column.
pub fn print_paths(rows: &[(&str, Summary)], decimals: usize) {
    print!("{}", paths_table(rows, decimals));
}

/// The text [`print_paths`] prints.
fn paths_table(rows: &[(&str, Summary)], decimals: usize) -> String {
    let mut text = format!(
        "{:<34} {:>9} {:>7} {:>7}\n",
        "path", "median ms", "min", "p90"
    );
    for (name, s) in rows {
        text.push_str(&format!(
            "{name:<34} {:>9.decimals$} {:>7.decimals$} {:>7.decimals$}\n",
            s.median, s.min, s.p90
        ));
    }
    text
}

/// Median, minimum and 90th percentile of a set of runs, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    /// The middle run (the mean of the two middle runs for an even count).
    pub median: f64,
    /// The fastest run.
    pub min: f64,
    /// The nearest-rank 90th percentile.
    pub p90: f64,
}

impl Summary {
    /// Summarizes `runs`; `None` when there are none.
    pub fn of(runs: &[Duration]) -> Option<Self> {
        let ms: Vec<f64> = runs.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        if ms.is_empty() {
            return None;
        }
        Some(Self {
            median: median(&ms),
            min: ms.iter().copied().reduce(f64::min)?,
            p90: percentile(&ms, 90),
        })
    }
}

/// Median and nearest-rank p90 of signed values (differences may be negative).
pub fn signed(values: &[f64]) -> (f64, f64) {
    (median(values), percentile(values, 90))
}

/// The nearest-rank `p`th percentile of `values` (NaN when there are none): the smallest value
/// with at least `p`% of the values at or below it.
pub fn percentile(values: &[f64], p: usize) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or(f64::NAN)
}

/// The median of `values` (the mean of the two middle ones for an even count; NaN for none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The largest of `values` (NaN for none).
pub fn max(values: &[f64]) -> f64 {
    values.iter().copied().reduce(f64::max).unwrap_or(f64::NAN)
}

/// `y = intercept + slope * x` fitted by least squares, with its coefficient of determination.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    /// The value at x = 0 (fixed cost).
    pub intercept: f64,
    /// The growth per unit of x (cost per plugin).
    pub slope: f64,
    /// R², 1.0 for points exactly on the line.
    pub r2: f64,
}

impl Line {
    /// Fits the points; `None` with fewer than two distinct x values.
    pub fn fit(points: &[(f64, f64)]) -> Option<Self> {
        let n = points.len() as f64;
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        let syy: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
        if points.len() < 2 || sxx == 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        let r2 = if syy == 0.0 {
            1.0
        } else {
            (sxy * sxy) / (sxx * syy)
        };
        Some(Self {
            intercept: mean_y - slope * mean_x,
            slope,
            r2,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(values: &[u64]) -> Vec<Duration> {
        values.iter().map(|v| Duration::from_millis(*v)).collect()
    }

    #[test]
    fn the_paths_table_is_the_benches_own_layout() {
        let s = Summary {
            median: 0.1234,
            min: 0.05,
            p90: 1.5,
        };
        let row = |name: &str, d: usize| {
            format!(
                "{name:<34} {:>9.d$} {:>7.d$} {:>7.d$}\n",
                s.median, s.min, s.p90
            )
        };
        assert_eq!(
            paths_table(&[("through rho mcp serve", s)], 3),
            format!(
                "{:<34} {:>9} {:>7} {:>7}\n{}",
                "path",
                "median ms",
                "min",
                "p90",
                row("through rho mcp serve", 3)
            )
        );
        assert!(
            paths_table(&[("bare", s)], 2)
                .ends_with("bare                                    0.12    0.05    1.50\n")
        );
    }

    #[test]
    fn summary_of_odd_and_even_counts() {
        let s = Summary::of(&ms(&[5, 1, 3, 2, 4])).unwrap();
        assert_eq!((s.median, s.min, s.p90), (3.0, 1.0, 5.0));
        let s = Summary::of(&ms(&[4, 1, 3, 2])).unwrap();
        assert_eq!(s.median, 2.5);
        let twenty_one: Vec<u64> = (1..=21).collect();
        assert_eq!(Summary::of(&ms(&twenty_one)).unwrap().p90, 19.0);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn line_through_exact_points() {
        let line = Line::fit(&[(0.0, 2.0), (10.0, 7.0), (20.0, 12.0)]).unwrap();
        assert!((line.slope - 0.5).abs() < 1e-12);
        assert!((line.intercept - 2.0).abs() < 1e-12);
        assert!((line.r2 - 1.0).abs() < 1e-12);
        assert!(Line::fit(&[(1.0, 1.0)]).is_none());
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let values: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        assert_eq!(percentile(&values, 50), 100.0);
        assert_eq!(percentile(&values, 99), 198.0);
        assert_eq!(percentile(&values, 100), 200.0);
        assert_eq!(percentile(&[7.0], 99), 7.0);
        assert!(percentile(&[], 50).is_nan());
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
        assert_eq!(max(&[3.0, 1.0, 10.0, 2.0]), 10.0);
    }

    #[test]
    fn signed_summary_handles_negative_values() {
        assert_eq!(signed(&[-1.0, 3.0, 2.0]), (2.0, 3.0));
        assert_eq!(signed(&[-2.0, -1.0]), (-1.5, -1.0));
    }
}
