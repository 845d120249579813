//! The MCP servers' lifecycle evidence as a session reports it (`docs/mcp.md`, "Lifecycle
//! evidence"): `toolset/initialized` and `toolset/closed` events with their session file
//! entries, and `toolset/changed` when a resumed file recorded another tools digest for a
//! server than the one it has now.

use super::*;
use crate::{ServerToolset, ToolsetChanged};

impl Session {
    /// Reports what the tool set's servers made usable since the last report: a
    /// `toolset/initialized` event and a `toolset_initialized` entry each. A new or resumed
    /// session's file also records every other server's current toolset once (without an
    /// event: nothing was initialized). Each server recorded is compared with the digest the
    /// resumed file recorded last for it, once: when they differ, `toolset/changed` follows
    /// and `/mcp` says so. A server rho gave up on since gets its `toolset/closed` (`live:
    /// false`) and `toolset_closed` entry.
    pub async fn report_toolsets(&mut self, sink: &dyn EventSink) {
        let mut recorded: Vec<ServerToolset> = Vec::new();
        for toolset in self.tools.take_initialized() {
            sink.send(SessionEvent::ToolsetInitialized(toolset.clone()))
                .await;
            recorded.push(toolset);
        }
        if std::mem::take(&mut self.baseline_pending) {
            for toolset in self.tools.toolsets() {
                if !recorded.iter().any(|r| r.server == toolset.server) {
                    recorded.push(toolset);
                }
            }
        }
        for toolset in recorded {
            if let Some(previous) = self.resumed_digests.remove(&toolset.server)
                && previous != toolset.digest
            {
                let changed = ToolsetChanged {
                    server: toolset.server.clone(),
                    previous,
                    current: toolset.digest.clone(),
                    live: toolset.live,
                };
                tracing::info!(
                    target: "rho::mcp",
                    server = changed.server.as_str(),
                    previous = changed.previous.as_str(),
                    current = changed.current.as_str(),
                    live = changed.live,
                    "toolset changed since the session file recorded it"
                );
                if let Some(server) = self.tools.servers.iter().find(|s| s.id == changed.server) {
                    server.set_digest_changed(changed.clone());
                }
                sink.send(SessionEvent::ToolsetChanged(changed)).await;
            }
            self.note(Entry::ToolsetInitialized(toolset));
        }
        // Servers rho gave up on are closed for this session.
        let lost = self.tools.take_lost();
        self.report_closed(lost, sink).await;
    }

    /// Reports servers the host closed (`closed`, from [`ToolSet::close`]): a `toolset/closed`
    /// event and a `toolset_closed` entry each.
    pub async fn report_closed(&mut self, closed: Vec<ServerToolset>, sink: &dyn EventSink) {
        for toolset in closed {
            sink.send(SessionEvent::ToolsetClosed(toolset.clone()))
                .await;
            self.note(Entry::ToolsetClosed(toolset));
        }
    }

    /// Lets go of the tool set, so its owner can close it ([`ToolSet::close`] needs the only
    /// handle); the session holds an empty one from then on.
    pub fn release_tools(&mut self) -> Arc<ToolSet> {
        std::mem::replace(&mut self.tools, Arc::new(ToolSet::empty()))
    }

    /// Records lifecycle evidence in the session file (kept until the conversation creates
    /// it). A failed write is logged: evidence never fails a session.
    fn note(&mut self, entry: Entry) {
        if let Some(file) = &mut self.file
            && let Err(e) = file.note(entry)
        {
            tracing::warn!(target: "rho::mcp", "recording a toolset entry failed: {e}");
        }
    }
}
