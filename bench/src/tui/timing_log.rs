//! rho's own frame timing, read back from its log file: the `rho_tui::timing` lines' fields,
//! the frames they describe, and the log file read from offsets ([`Log`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::RHO_LOG;

/// The tracing target of rho's timing lines, as the log file prints it.
const TIMING_TARGET: &str = "rho_tui::timing:";

/// The `name=value` fields of one `rho_tui::timing` log line; `None` for other lines.
pub fn timing_fields(line: &str) -> Option<Vec<(&str, f64)>> {
    let (_, rest) = line.split_once(TIMING_TARGET)?;
    Some(
        rest.split_whitespace()
            .filter_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                Some((name, value.parse().ok()?))
            })
            .collect(),
    )
}

/// One drawn frame from the log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// Building and writing the frame (`draw_us`, wall time).
    pub draw_us: f64,
    /// The drawing thread's CPU time for it (`draw_cpu_us`): `draw_us` less the time rho
    /// waited for a core or for the terminal to take the bytes.
    pub draw_cpu_us: Option<f64>,
    /// From the oldest input it shows to the end of its write (`input_to_frame_us`), when it
    /// shows input.
    pub input_to_frame_us: Option<f64>,
}

/// Every frame in `text` (log lines), in order.
pub fn frames(text: &str) -> Vec<Frame> {
    text.lines()
        .filter_map(timing_fields)
        .filter_map(|fields| {
            let get = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
            Some(Frame {
                draw_us: get("draw_us")?,
                draw_cpu_us: get("draw_cpu_us"),
                input_to_frame_us: get("input_to_frame_us"),
            })
        })
        .collect()
}

/// The first value of field `name` in `text` (log lines).
pub fn first_field(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter_map(timing_fields)
        .find_map(|fields| fields.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
}

/// The `draw_us` of the frame that logged `name` (rho logs a frame's other fields just before
/// its `draw_us`).
pub fn draw_us_of(text: &str, name: &str) -> Option<f64> {
    let mut lines = text.lines().filter_map(timing_fields);
    lines.find(|fields| fields.iter().any(|(n, _)| *n == name))?;
    let next = lines.next()?;
    next.iter().find(|(n, _)| *n == "draw_us").map(|(_, v)| *v)
}

/// `$RHO_HOME/logs/rho.log`, read from offsets.
pub struct Log {
    path: PathBuf,
}

impl Log {
    /// The log of the rho whose `RHO_HOME` is `rho_home`.
    pub fn new(rho_home: &Path) -> Self {
        Self {
            path: rho_home.join("logs").join("rho.log"),
        }
    }

    /// Its size now (0 before rho created it).
    pub fn len(&self) -> usize {
        std::fs::metadata(&self.path).map_or(0, |m| usize::try_from(m.len()).unwrap_or(0))
    }

    /// What was written from `offset` on.
    pub fn read_from(&self, offset: usize) -> String {
        let bytes = std::fs::read(&self.path).unwrap_or_default();
        String::from_utf8_lossy(bytes.get(offset..).unwrap_or_default()).into_owned()
    }

    /// Waits until a timing line after `offset` carries `name`; returns its value.
    pub fn wait_for_field(
        &self,
        offset: usize,
        name: &str,
        timeout: Duration,
    ) -> Result<f64, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.read_from(offset);
            if let Some(value) = first_field(&text, name) {
                return Ok(value);
            }
            if Instant::now() >= deadline {
                let why = if text.contains(TIMING_TARGET) {
                    format!("it has timing lines, but none with `{name}`")
                } else {
                    "it has no `rho_tui::timing` lines".to_owned()
                };
                return Err(format!(
                    "{}: {why} within {timeout:?} (RHO_LOG={RHO_LOG}); the rho build may \
                     predate the timing log: rebuild it with `cargo build --release -p rho-cli`",
                    self.path.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_lines_are_parsed() {
        let line = "2026-12-02T01:13:00.123456Z DEBUG rho_tui::timing: draw_us=850 \
                    input_to_frame_us=2300";
        assert_eq!(
            timing_fields(line),
            Some(vec![("draw_us", 850.0), ("input_to_frame_us", 2300.0)])
        );
        assert_eq!(timing_fields("2026 WARN rho_core: draw_us=1"), None);
        let log = "x DEBUG rho_tui::timing: first_frame_ms=12.3\n\
                   x WARN rho_mcp: something\n\
                   x DEBUG rho_tui::timing: draw_us=900\n\
                   x DEBUG rho_tui::timing: draw_us=850 draw_cpu_us=700 input_to_frame_us=2300\n\
                   x DEBUG rho_tui::timing: conversation_frame_ms=95.1\n";
        assert_eq!(first_field(log, "first_frame_ms"), Some(12.3));
        assert_eq!(first_field(log, "conversation_frame_ms"), Some(95.1));
        assert_eq!(first_field(log, "nothing"), None);
        assert_eq!(draw_us_of(log, "first_frame_ms"), Some(900.0));
        assert_eq!(draw_us_of(log, "conversation_frame_ms"), None);
        assert_eq!(
            frames(log),
            vec![
                Frame {
                    draw_us: 900.0,
                    draw_cpu_us: None,
                    input_to_frame_us: None
                },
                Frame {
                    draw_us: 850.0,
                    draw_cpu_us: Some(700.0),
                    input_to_frame_us: Some(2300.0)
                }
            ]
        );
    }
}
