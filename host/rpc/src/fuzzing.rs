//! Entry points for the fuzz targets in `fuzz/`: the synchronous half of the codec (framing
//! and params decoding), without a session host. Not a stable API.

use crate::codec::{Decoded, decode_line};

/// What one line of `rho rpc` input became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineOutcome {
    /// A blank line: ignored.
    Blank,
    /// Refused by the codec: the error response line (`None` for a notification).
    Refused(Option<String>),
    /// A request rho answers with a result: its params decoded into a host operation, or it
    /// is `rpc.discover`, which the codec answers itself.
    Accepted {
        /// Whether it carries an id (a request rather than a notification).
        has_id: bool,
    },
}

/// Runs one line through the parse and params-decode path `rho rpc` uses for input.
pub fn line(bytes: &[u8]) -> LineOutcome {
    match decode_line(bytes) {
        Decoded::Blank => LineOutcome::Blank,
        Decoded::Refused(response) => LineOutcome::Refused(response),
        Decoded::Accepted { request, .. } => LineOutcome::Accepted {
            has_id: request.id.is_some(),
        },
        Decoded::Answered(response) => LineOutcome::Accepted {
            has_id: response.is_some(),
        },
    }
}
