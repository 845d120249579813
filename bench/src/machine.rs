//! A one-line description of the machine, printed with every result table.

/// CPU count, CPU model and kernel, as far as this platform tells.
pub fn describe() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .and_then(|rest| rest.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|release| format!("{} {}", std::env::consts::OS, release.trim()))
        .unwrap_or_else(|_| std::env::consts::OS.to_owned());
    format!("{cpus} CPUs ({model}), {kernel}")
}

/// The 1-, 5- and 15-minute load averages, when the platform reports them: other work on the
/// machine moves absolute figures (ratios less so), so every table says how busy it was.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|text| !text.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
