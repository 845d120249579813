//! What the hardening benchmarks count by walking `/proc` themselves instead of trusting rho:
//! the processes whose command line carries a run's unique marker argument, the bench's own
//! children (and which of them are zombies), and the bench's open descriptors.

use std::path::Path;

/// One process found under `/proc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// Its id.
    pub pid: u32,
    /// Its parent's id.
    pub ppid: u32,
    /// The one-letter state from `/proc/<pid>/stat` (`R`, `S`, `Z`, ...).
    pub state: char,
    /// The command line, arguments joined by spaces (empty for a zombie).
    pub cmdline: String,
}

impl Process {
    /// Whether the process has exited and waits to be reaped.
    pub fn is_zombie(&self) -> bool {
        self.state == 'Z'
    }
}

/// Every process readable under `/proc` (those that exit while being read are skipped).
pub fn all() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            read(&entry.path(), pid)
        })
        .collect()
}

fn read(dir: &Path, pid: u32) -> Option<Process> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    let (state, ppid) = parse_stat(&stat)?;
    let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline)
        .trim_end_matches('\0')
        .replace('\0', " ");
    Some(Process {
        pid,
        ppid,
        state,
        cmdline,
    })
}

/// The state and parent id from a `/proc/<pid>/stat` line. The command name in parentheses
/// may hold spaces and parentheses itself, so the fields are read after the last `)`.
fn parse_stat(stat: &str) -> Option<(char, u32)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// The processes whose command line contains `marker`, except the bench itself.
pub fn with_marker(marker: &str) -> Vec<Process> {
    let me = std::process::id();
    all()
        .into_iter()
        .filter(|p| p.pid != me && p.cmdline.contains(marker))
        .collect()
}

/// The bench's children: (all of them, the zombies among them).
pub fn children() -> (usize, usize) {
    let me = std::process::id();
    let mine: Vec<Process> = all().into_iter().filter(|p| p.ppid == me).collect();
    let zombies = mine.iter().filter(|p| p.is_zombie()).count();
    (mine.len(), zombies)
}

/// The bench's open file descriptors (`/proc/self/fd`, less the one reading it).
pub fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|entries| entries.count().saturating_sub(1))
        .unwrap_or(0)
}

/// Ends `pid` with SIGKILL through `kill(1)` (the bench has no libc binding), so one leaked
/// process is counted once and not again by every later check.
pub fn kill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// A child process killed and reaped when this is dropped (the bench's own peers).
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_read_after_the_last_parenthesis() {
        assert_eq!(parse_stat("42 (fake-mcp) S 7 42 42 0 -1"), Some(('S', 7)));
        assert_eq!(parse_stat("9 (a) b (c)) Z 1 9"), Some(('Z', 1)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn the_bench_sees_itself_and_its_children() {
        let me = std::process::id();
        assert!(all().iter().any(|p| p.pid == me && !p.is_zombie()));
        // `sleep` takes a fraction, so the marker can be its argument.
        let marker = format!("30.7{me}");
        let mut child = std::process::Command::new("sleep")
            .arg(&marker)
            .spawn()
            .unwrap();
        // Until the child has exec'd, /proc shows the fork's command line, not sleep's.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut found = with_marker(&marker);
        while found.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
            found = with_marker(&marker);
        }
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].ppid, me);
        assert!(children().0 >= 1);
        kill(child.id());
        child.wait().unwrap();
        assert!(with_marker(&marker).is_empty());
        assert!(open_descriptors() >= 3);
    }
}
