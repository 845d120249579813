//! The `/proc` figures of the rho process on the pty: its children and name, its CPU time (in
//! clock ticks, and per thread from `schedstat`) and its peak resident set.

/// The children of every thread of `pid`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// The command name of `pid`.
pub fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|text| text.trim_end().to_owned())
}

/// User plus system CPU time of `pid` in clock ticks (`utime` + `stime` of `/proc/PID/stat`).
pub fn cpu_ticks(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/stat");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    stat_cpu_ticks(&text).ok_or_else(|| format!("{path}: no utime/stime in {text:?}"))
}

/// `utime` + `stime` (fields 14 and 15) of a `/proc/PID/stat` text; the command name in
/// parentheses may hold spaces, so fields are counted after its closing parenthesis.
pub fn stat_cpu_ticks(text: &str) -> Option<u64> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state).
    let utime: u64 = fields.get(14 - 3)?.parse().ok()?;
    let stime: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second of `/proc/PID/stat` (`USER_HZ`, 100 on Linux).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// One thread's CPU figures from `/proc/PID/task/TID/schedstat`, far finer than the ticks of
/// `stat`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadCpu {
    /// The thread id.
    pub tid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// Time on a CPU, in nanoseconds (the first field).
    pub ns: u64,
    /// Times it was scheduled onto a CPU (the third field): wake-ups, near enough.
    pub slices: u64,
}

/// The CPU figures of every thread of `pid`.
pub fn threads_cpu(pid: u32) -> Result<Vec<ThreadCpu>, String> {
    let dir = format!("/proc/{pid}/task");
    let tasks = std::fs::read_dir(&dir).map_err(|e| format!("cannot read {dir}: {e}"))?;
    Ok(tasks
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let name = std::fs::read_to_string(task.path().join("comm")).ok()?;
            let stat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            let fields: Vec<u64> = stat
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            Some(ThreadCpu {
                tid,
                name: name.trim_end().to_owned(),
                ns: *fields.first()?,
                slices: *fields.get(2)?,
            })
        })
        .collect())
}

/// Per thread name, the CPU nanoseconds and slices between two readings (threads that came or
/// went in between count from zero), busiest first.
pub fn threads_delta(before: &[ThreadCpu], after: &[ThreadCpu]) -> Vec<(String, u64, u64)> {
    let mut by_name: Vec<(String, u64, u64)> = Vec::new();
    for thread in after {
        let (ns0, slices0) = before
            .iter()
            .find(|t| t.tid == thread.tid)
            .map_or((0, 0), |t| (t.ns, t.slices));
        let (ns, slices) = (
            thread.ns.saturating_sub(ns0),
            thread.slices.saturating_sub(slices0),
        );
        match by_name.iter_mut().find(|(name, _, _)| *name == thread.name) {
            Some(entry) => {
                entry.1 += ns;
                entry.2 += slices;
            }
            None => by_name.push((thread.name.clone(), ns, slices)),
        }
    }
    by_name.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by_name
}

/// The peak resident set of `pid` in KiB (`VmHWM` of `/proc/PID/status`).
pub fn vm_hwm_kib(pid: u32) -> Result<u64, String> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    text.lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("{path} has no VmHWM line"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_cpu_fields() {
        let stat = "4242 (rho (x) y) S 1 4242 4242 34816 4242 4194304 900 0 0 0 17 5 0 0 20 0 \
                    9 0 12345 100000 2000";
        assert_eq!(stat_cpu_ticks(stat), Some(22));
        assert_eq!(stat_cpu_ticks("4242 (rho) S 1"), None);
    }

    #[test]
    fn thread_deltas_are_summed_by_name() {
        let thread = |tid, name: &str, ns, slices| ThreadCpu {
            tid,
            name: name.to_owned(),
            ns,
            slices,
        };
        let before = [thread(1, "rho", 100, 5), thread(2, "worker", 50, 1)];
        let after = [
            thread(1, "rho", 150, 7),
            thread(2, "worker", 60, 2),
            thread(3, "worker", 200, 9),
        ];
        assert_eq!(
            threads_delta(&before, &after),
            vec![("worker".to_owned(), 210, 10), ("rho".to_owned(), 50, 2)]
        );
    }
}
