//! What loading the credential store costs with 100 servers' credentials in it: every server's
//! credential loaded one by one as sessions do (`load_for`, with its directory check, no-follow
//! open, ownership check, bounded read and strict parse), and the whole store listed
//! (`list`), each against reading the same files with plain `std::fs::read` in the same run.
//! The three alternate (and which goes first rotates) so drift on a noisy machine hits all
//! alike. The goal: loading 100 servers' credentials takes at most 1 ms.
//!
//! `cargo bench -p rho-config --bench credentials [-- --runs N --warmup N --servers N]`

// A benchmark binary owns its stdout (the result table) and reports failures on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

// The machine line every rho benchmark prints, from its one definition in `rho-bench`.
#[path = "../../../bench/src/machine.rs"]
mod machine;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rho_config::{Credential, CredentialStore, CredentialSummary};
use serde_json::json;

/// The goal for loading every server's credentials.
const GOAL: Duration = Duration::from_millis(1);

const ISSUER: &str = "https://auth.example.com";

const USAGE: &str = "\
usage: cargo bench -p rho-config --bench credentials [-- options]

options:
  --runs N      timed rounds (default 200)
  --warmup N    untimed rounds before them (default 20)
  --servers N   servers with stored credentials (default 100)
";

struct Options {
    runs: usize,
    warmup: usize,
    servers: usize,
}

fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("credentials: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if cfg!(debug_assertions) {
        eprintln!(
            "credentials: warning: this is a debug build; run it with `cargo bench` for figures \
             worth recording"
        );
    }
    match measure(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("credentials: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The options; `Ok(None)` asks for the usage text.
fn parse(args: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        runs: 200,
        warmup: 20,
        servers: 100,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let value = args.next().ok_or_else(|| format!("{name} needs a value"))?;
            value
                .parse()
                .map_err(|_| format!("{name}: {value:?} is not a number"))
        };
        match arg.as_str() {
            // `cargo bench` passes `--bench` to every bench binary.
            "--bench" => {}
            "-h" | "--help" => return Ok(None),
            "--runs" => options.runs = number("--runs")?,
            "--warmup" => options.warmup = number("--warmup")?,
            "--servers" => options.servers = number("--servers")?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if options.runs == 0 || options.servers == 0 {
        return Err("--runs and --servers must be at least 1".into());
    }
    Ok(Some(options))
}

/// Server `i`'s identity: every third one a plugin server, as a plugin-heavy setup has.
fn identity(i: usize) -> String {
    if i.is_multiple_of(3) {
        format!("plugin-{:02}/server_{i}", i / 3)
    } else {
        format!("remote-{i:03}")
    }
}

/// A token body the size real ones have: a JWT access token of about 1 KB, a refresh token.
fn credential(server: String, i: usize) -> Credential {
    let access = format!("eyJhbGciOiJSUzI1NiJ9.{}.{i:08}", "x".repeat(960));
    Credential {
        server,
        summary: CredentialSummary {
            resource: Some(format!("https://mcp-{i}.example.com/mcp")),
            issuer: ISSUER.into(),
            client_id: format!("client-{i}"),
            received_at: 1_700_000_000,
            expires_at: Some(1_700_003_600),
            scopes: vec!["read".into(), "write".into()],
            refreshable: true,
        },
        token: json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": format!("rt-{i:08}-{}", "r".repeat(48)),
            "scope": "read write",
        }),
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn p90(times: &[Duration]) -> Duration {
    times[(times.len() * 9).div_ceil(10).max(1) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[derive(Clone, Copy)]
enum Kind {
    Read,
    LoadEach,
    List,
}

/// One round of `kind` over every server; fails if anything did not load.
fn round(
    kind: Kind,
    store: &CredentialStore,
    servers: &[String],
    files: &[PathBuf],
) -> Result<Duration, String> {
    let started = Instant::now();
    let found = match kind {
        Kind::Read => files
            .iter()
            .map(std::fs::read)
            .filter(|bytes| bytes.as_ref().is_ok_and(|b| !b.is_empty()))
            .count(),
        Kind::LoadEach => {
            let mut found = 0;
            for server in servers {
                if store
                    .load_for(server, ISSUER)
                    .map_err(|e| e.to_string())?
                    .is_some()
                {
                    found += 1;
                }
            }
            found
        }
        Kind::List => store
            .list()
            .map_err(|e| e.to_string())?
            .iter()
            .filter(|listed| listed.summary.is_ok())
            .count(),
    };
    let elapsed = started.elapsed();
    if found != servers.len() {
        return Err(format!("found {found} of {} credentials", servers.len()));
    }
    Ok(elapsed)
}

fn measure(options: &Options) -> Result<(), String> {
    let load_at_start = machine::load();
    let root = tempfile::tempdir().map_err(|e| format!("cannot create a temporary dir: {e}"))?;
    let store = CredentialStore::new(root.path().join("credentials"));
    let servers: Vec<String> = (0..options.servers).map(identity).collect();
    let mut files = Vec::with_capacity(servers.len());
    for (i, server) in servers.iter().enumerate() {
        store
            .save(&credential(server.clone(), i))
            .map_err(|e| e.to_string())?;
        files.push(store.file_of(server).map_err(|e| e.to_string())?);
    }
    let bytes: u64 = files
        .iter()
        .filter_map(|file| std::fs::metadata(file).ok())
        .map(|meta| meta.len())
        .sum();

    let kinds = [Kind::Read, Kind::LoadEach, Kind::List];
    let mut times: [Vec<Duration>; 3] = Default::default();
    for r in 0..options.warmup + options.runs {
        // Rotate which kind goes first, so none always meets a warmer cache.
        for k in 0..kinds.len() {
            let index = (r + k) % kinds.len();
            let time = round(kinds[index], &store, &servers, &files)?;
            if r >= options.warmup {
                times[index].push(time);
            }
        }
    }
    let [mut read, mut each, mut list] = times;
    let (read_median, each_median, list_median) =
        (median(&mut read), median(&mut each), median(&mut list));

    println!(
        "credentials: {} servers ({} bytes of files), {} rounds after {} warm-up rounds",
        options.servers, bytes, options.runs, options.warmup
    );
    println!("machine:  {}", machine::describe());
    println!(
        "load:     {load_at_start} (start), {} (end)",
        machine::load()
    );
    println!(
        "fs::read of every file (baseline): median {:>7.3} ms   p90 {:>7.3} ms",
        ms(read_median),
        ms(p90(&read))
    );
    for (name, median, times) in [
        ("load_for every server:           ", each_median, &each),
        ("list the store:                  ", list_median, &list),
    ] {
        println!(
            "{name} median {:>7.3} ms   p90 {:>7.3} ms   {:.2}x the baseline",
            ms(median),
            ms(p90(times)),
            median.as_secs_f64() / read_median.as_secs_f64().max(f64::MIN_POSITIVE)
        );
    }
    let worst = each_median.max(list_median);
    println!(
        "loading {} servers' credentials: median {:.3} ms (the slower of the two; goal <= {} \
         ms): {}",
        options.servers,
        ms(worst),
        ms(GOAL),
        if worst <= GOAL { "met" } else { "NOT met" }
    );
    Ok(())
}
