//! Helpers for the end-to-end tests: a sandboxed home and project, the real `rho` binary, file
//! tree builders and a canary that proves nothing outside the managed roots was touched.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
pub mod everything;
pub mod oauth;
pub mod terminal;
pub mod tmux;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The `rho` binary: `$RHO_BIN`, or the one `cargo build -p rho-cli --bin rho` makes for this
/// test's profile, built once per test process (a quick no-op when it is up to date, so a test
/// never runs a stale `rho`) and found from cargo's own report of the executable it wrote.
pub fn rho_bin() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| match std::env::var_os("RHO_BIN") {
        Some(bin) => PathBuf::from(bin),
        None => cargo_build_bin("rho-cli", "rho"),
    })
    .clone()
}

/// Builds `bin` of `package` with the cargo that builds these tests, for the tests' profile
/// (its progress on stderr), and returns the executable cargo reports. Panics with cargo's
/// errors when the build fails.
pub fn cargo_build_bin(package: &str, bin: &str) -> PathBuf {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(repo_root())
        .args(["build", "-p", package, "--bin", bin])
        .args(["--message-format", "json-render-diagnostics"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if !cfg!(debug_assertions) {
        command.arg("--release");
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to build {bin}: {e}"));
    assert!(
        output.status.success(),
        "cargo build -p {package} --bin {bin} failed (its errors are above)"
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| {
            message["reason"] == "compiler-artifact" && message["target"]["name"] == bin
        })
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("cargo built no executable {bin}"))
}

/// The repository root (for fixtures and examples).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A fixture directory under `tests/fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    repo_root().join("tests/fixtures").join(rel)
}

/// The result of one `rho` run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The exit code and both streams of a finished process.
    pub fn from(output: Output) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// stdout parsed as JSON (panics with both streams when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Asserts exit code 0.
    pub fn ok(self) -> Self {
        assert_eq!(
            self.code, 0,
            "rho failed:\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Asserts the given exit code.
    pub fn code(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "unexpected exit code:\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A temporary home (`HOME`, `RHO_HOME`) and project (a git repository) for one test.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    pub rho_home: PathBuf,
    pub project: PathBuf,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dunce::canonicalize(dir.path()).unwrap();
        let home = base.join("home");
        let project = base.join("project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        Self {
            rho_home: home.join(".rho"),
            dir,
            home,
            project,
        }
    }

    /// `~/.agents/plugins`.
    pub fn user_plugins(&self) -> PathBuf {
        self.home.join(".agents/plugins")
    }

    /// `<project>/.agents/plugins`.
    pub fn project_plugins(&self) -> PathBuf {
        self.project.join(".agents/plugins")
    }

    /// The registry of this sandbox as a session loads it (`config.toml` under `RHO_HOME`).
    pub fn registry(&self) -> rho_core::Registry {
        let env = rho_core::PathsEnv {
            home: Some(self.home.clone().into()),
            rho_home: Some(self.rho_home.clone().into()),
        };
        let paths = rho_core::RhoPaths::resolve(&env, &self.project).unwrap();
        let config = rho_core::ConfigSource::Default(self.rho_home.join("config.toml"));
        rho_core::Registry::load(paths, &config)
    }

    /// A scratch directory outside every root.
    pub fn outside(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join("outside").join(name);
        std::fs::create_dir_all(&p).unwrap();
        dunce::canonicalize(p).unwrap()
    }

    /// Runs rho with `--cwd <project>` and a clean environment.
    pub fn rho(&self, args: &[&str]) -> Run {
        self.rho_in(&self.project, args)
    }

    /// Runs rho with `--cwd <dir>`.
    pub fn rho_in(&self, cwd: &Path, args: &[&str]) -> Run {
        let output = self
            .command_in(cwd, args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        Run::from(output)
    }

    /// `rho plugins list --json`, as a map from entry path to plugin object.
    pub fn plugins(&self) -> Vec<Value> {
        self.rho(&["plugins", "list", "--json"]).ok().json()["plugins"]
            .as_array()
            .unwrap()
            .clone()
    }

    /// The single listed plugin called `name` that is not shadowed, or the first with that name.
    pub fn plugin(&self, name: &str) -> Value {
        let all = self.plugins();
        all.iter()
            .find(|p| p["name"] == name && p["status"] != "shadowed")
            .or_else(|| all.iter().find(|p| p["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no plugin {name} in {all:#?}"))
    }
}

/// Copies a directory tree (used to place fixtures; links are recreated as links).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let ft = entry.file_type().unwrap();
        let dst = to.join(entry.file_name());
        if ft.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path()).unwrap(), &dst).unwrap();
        } else if ft.is_dir() {
            copy_tree(&entry.path(), &dst);
        } else {
            std::fs::copy(entry.path(), &dst).unwrap();
        }
    }
}

/// Writes a file, creating parents.
pub fn write(path: &Path, text: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A minimal valid manifest for `name`.
pub fn manifest(name: &str) -> String {
    format!(
        r#"{{"$schema":"https://agent-plugins.org/schemas/1.0.0/plugin.schema.json","name":"{name}"}}"#
    )
}

/// Creates `<dir>/plugin.json` for `name`.
pub fn make_plugin(dir: &Path, name: &str) {
    write(&dir.join("plugin.json"), manifest(name));
}

/// Creates a valid skill `<dir>/<name>/SKILL.md`.
pub fn make_skill(skills_dir: &Path, name: &str, description: &str) {
    write(
        &skills_dir.join(name).join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nDo the thing.\n"
        ),
    );
}

/// Creates `<dir>/mcp.json` from the `mcpServers` object text.
pub fn make_mcp(dir: &Path, servers: &str) {
    write(
        &dir.join("mcp.json"),
        format!(
            r#"{{"$schema":"https://agent-plugins.org/schemas/1.0.0/mcp.schema.json","mcpServers":{servers}}}"#
        ),
    );
}

/// Creates a symlink (panics on failure).
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::fs::create_dir_all(link.as_ref().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// Kills `child`'s process group (it leads one: what it started dies with it), then the child,
/// and reaps it.
pub fn kill_group_and_reap(child: &mut Child) {
    if let Some(pid) = i32::try_from(child.id())
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Makes a FIFO at `path` (and the folders above it) with `mkfifo(1)`.
pub fn make_fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Files a reader of user-named files must refuse before reading, in one folder.
pub struct HostileFiles {
    /// A FIFO (`fifo.<ext>`): an open for reading would block until a writer comes.
    pub fifo: PathBuf,
    /// A link to `/dev/zero` (`zero.<ext>`): a read never ends.
    pub device: PathBuf,
    /// A sparse regular file of 1 GiB (`sparse.<ext>`).
    pub sparse: PathBuf,
}

impl HostileFiles {
    /// Makes them in `dir`, named with `extension`.
    pub fn make(dir: &Path, extension: &str) -> Self {
        let files = Self {
            fifo: dir.join(format!("fifo.{extension}")),
            device: dir.join(format!("zero.{extension}")),
            sparse: dir.join(format!("sparse.{extension}")),
        };
        make_fifo(&files.fifo);
        symlink("/dev/zero", &files.device);
        std::fs::File::create(&files.sparse)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        files
    }

    /// Each file with the problem rho names when it refuses it (a cap of 1 MiB).
    pub fn refusals(&self) -> [(&Path, &'static str); 3] {
        [
            (&self.fifo, "a FIFO, not a regular file"),
            (&self.device, "a character device, not a regular file"),
            (&self.sparse, "larger than the 1 MiB cap"),
        ]
    }
}

/// The codes of a plugin object's diagnostics.
pub fn codes(plugin: &Value) -> Vec<String> {
    plugin["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect()
}

/// Strings of a JSON array.
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// A directory outside every root holding a secret marker; proves nothing read, copied or
/// changed it.
pub struct Canary {
    pub dir: PathBuf,
    pub file: PathBuf,
    pub marker: String,
    snapshot: BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)>,
}

impl Canary {
    pub fn new(sandbox: &Sandbox) -> Self {
        let dir = sandbox.outside("canary");
        let marker = format!(
            "CANARY-{}-{}",
            std::process::id(),
            dir.display().to_string().len()
        );
        let file = dir.join("secret.txt");
        std::fs::write(&file, format!("{marker}\n")).unwrap();
        write(
            &dir.join("sub/SKILL.md"),
            format!("---\nname: sub\ndescription: {marker}\n---\n{marker}\n"),
        );
        write(&dir.join("plugin.json"), manifest("canary"));
        let mut canary = Self {
            dir,
            file,
            marker,
            snapshot: BTreeMap::new(),
        };
        canary.snapshot = canary.take();
        canary
    }

    fn take(&self) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
        let mut map = BTreeMap::new();
        for entry in walk(&self.dir) {
            let meta = std::fs::symlink_metadata(&entry).unwrap();
            let bytes = if meta.is_file() {
                std::fs::read(&entry).unwrap()
            } else {
                Vec::new()
            };
            map.insert(entry, (bytes, meta.modified().unwrap()));
        }
        map
    }

    /// Asserts the canary tree is exactly as it was.
    pub fn assert_untouched(&self) {
        assert_eq!(self.take(), self.snapshot, "the canary directory changed");
    }

    /// Asserts `text` does not contain the marker.
    pub fn assert_absent(&self, text: &str) {
        assert!(
            !text.contains(&self.marker),
            "canary marker leaked:\n{text}"
        );
    }

    /// Asserts no file under `dir` contains the marker.
    pub fn assert_not_copied_into(&self, dir: &Path) {
        for entry in walk(dir) {
            if std::fs::symlink_metadata(&entry).unwrap().is_file() {
                let bytes = std::fs::read(&entry).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(&self.marker),
                    "canary copied into {}",
                    entry.display()
                );
            }
        }
    }
}

/// Every path below `dir` (not following links).
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let entry = entry.unwrap();
        let path = entry.path();
        out.push(path.clone());
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&path));
        }
    }
    out.sort();
    out
}

/// A binary of the pinned npm test peers (`tests/peers`), installed by `.ci/run`.
pub fn peer_bin(name: &str) -> PathBuf {
    let bin = repo_root().join("tests/peers/node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: install the test peers with `npm ci --prefix tests/peers` (bash .ci/run does)",
        bin.display()
    );
    bin
}

/// A TCP port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Processes whose command line contains `marker` (a unique argument), from /proc.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) {
            found.push(format!("{}: {text}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// Asserts that no process whose command line contains `marker` is left, allowing the
/// kernel a moment (3 s at most) to reap what rho stopped as it ended.
pub fn assert_no_process(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(3);
    while !processes_with(marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "processes left behind: {:?}",
            processes_with(marker)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Sandbox {
    /// `rho --cwd <project> <args>` with only `PATH`, `HOME` and `RHO_HOME` set: the one way
    /// the tests start rho in a sandbox (stdio left to the caller).
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(&rho_bin(), args)
    }

    /// [`Sandbox::command`] running the rho binary at `bin` (such as a copy placed outside the
    /// repository).
    pub fn command_of(&self, bin: &Path, args: &[&str]) -> Command {
        self.command_at(bin, &self.project, args)
    }

    /// [`Sandbox::command`] with `--cwd <cwd>` instead of the project.
    pub fn command_in(&self, cwd: &Path, args: &[&str]) -> Command {
        self.command_at(&rho_bin(), cwd, args)
    }

    /// [`Sandbox::command_of`] with `--cwd <cwd>` instead of the project.
    fn command_at(&self, bin: &Path, cwd: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(bin);
        command
            .arg("--cwd")
            .arg(cwd)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("RHO_HOME", &self.rho_home);
        command
    }

    /// Runs rho with extra environment variables.
    pub fn rho_env(&self, env: &[(&str, &str)], args: &[&str]) -> Run {
        let mut command = self.command(args);
        command.stdin(std::process::Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        Run::from(command.output().unwrap())
    }
}

/// The entry `id` of a `rho mcp list --json` document.
pub fn mcp_server<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {list:#}"))
}

/// Writes an executable shell script.
pub fn write_script(path: &Path, text: &str) {
    write(path, text);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Panics, saying how to install it, unless the Python MCP SDK (`mcp` 2.x, whose server the
/// tests run) can be imported.
pub fn require_python_mcp() {
    let probe = Command::new("python3")
        .args(["-c", "import mcp.server.mcpserver"])
        .output()
        .unwrap();
    assert!(
        probe.status.success(),
        "the Python MCP SDK is missing: pip install -r .ci/requirements.txt (bash .ci/run does)"
    );
}

/// Waits until something listens on `127.0.0.1:port` (panics after `seconds`).
pub fn wait_for_port(port: u16, seconds: u64, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} did not listen on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A child process killed and reaped when dropped (test servers).
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Sandbox {
    /// Writes `$RHO_HOME/config.toml`.
    pub fn write_config(&self, text: &str) {
        write(&self.rho_home.join("config.toml"), text);
    }

    /// Writes a `config.toml` whose one MCP server `name` runs the script at `command`.
    pub fn write_server_command(&self, name: &str, command: &Path) {
        self.write_config(&format!(
            "[mcp.servers.{name}]\ncommand = {:?}\n",
            command.to_str().unwrap()
        ));
    }
}

/// A running scripted model server (`fake-model`, an OpenAI-compatible endpoint on loopback)
/// with its script and request log. `bin` is the `fake-model` path
/// (`env!("CARGO_BIN_EXE_fake-model")` in a test).
pub struct FakeModel {
    _child: KillOnDrop,
    port: u16,
    log: PathBuf,
}

impl FakeModel {
    /// Writes `script` into `dir` and starts the server on an ephemeral port.
    pub fn start(bin: &str, dir: &Path, script: &Value) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let script_path = dir.join("script.json");
        write(&script_path, serde_json::to_vec_pretty(script).unwrap());
        let port_file = dir.join("port");
        let log = dir.join("requests.jsonl");
        let child = KillOnDrop(
            Command::new(bin)
                .arg("--script")
                .arg(&script_path)
                .arg("--port-file")
                .arg(&port_file)
                .arg("--log")
                .arg(&log)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file)
                && let Ok(port) = text.trim().parse()
            {
                break port;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "fake-model did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        Self {
            _child: child,
            port,
            log,
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The base URL to pass as `--endpoint`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The request bodies the model received, in order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone())
            .collect()
    }
}

/// A running `rho rpc` over pipes: requests in, every stdout line checked to be one JSON-RPC
/// message. Killed when dropped.
pub struct Rpc {
    /// The `rho rpc` process.
    pub child: Child,
    /// Its stdin; take it to send EOF.
    pub stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// Every message read so far, in order.
    pub seen: Vec<Value>,
    /// Messages read while waiting for something else, handed out again first.
    pending: std::collections::VecDeque<Value>,
}

impl Rpc {
    pub fn start(sandbox: &Sandbox, model: &FakeModel, extra: &[&str]) -> Self {
        Self::start_with(
            sandbox,
            &[
                &["--endpoint", &model.endpoint(), "--model", "fake-model-1"],
                extra,
            ]
            .concat(),
        )
    }

    pub fn start_with(sandbox: &Sandbox, args: &[&str]) -> Self {
        Self::start_env(sandbox, args, &[])
    }

    pub fn start_env(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = sandbox.command(&[&["rpc"], args].concat());
        if let Some(filter) = std::env::var_os("RHO_TEST_LOG") {
            command.env("RHO_LOG", filter);
        }
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match std::env::var_os("RHO_TEST_STDERR") {
                Some(path) => Stdio::from(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .unwrap(),
                ),
                None => Stdio::null(),
            })
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // stdout carries only protocol: every line is one JSON-RPC message.
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                assert_eq!(value["jsonrpc"], "2.0", "{line}");
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut rpc = Self {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            pending: std::collections::VecDeque::new(),
        };
        let ready = rpc.next_message();
        assert_eq!(ready["method"], "ready", "{ready}");
        rpc
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    pub fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }

    pub fn next_message(&mut self) -> Value {
        if let Some(value) = self.pending.pop_front() {
            return value;
        }
        let value = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no message from rho; so far: {:#?}", self.seen));
        self.seen.push(value.clone());
        value
    }

    /// Reads until the response to `id`; returns (notifications before it, the response).
    pub fn response(&mut self, id: u64) -> (Vec<Value>, Value) {
        let mut notes = Vec::new();
        loop {
            let message = self.next_message();
            if message.get("id") == Some(&json!(id)) {
                return (notes, message);
            }
            notes.push(message);
        }
    }

    /// Sends a request and returns its result (panics on an error response). Notifications
    /// read meanwhile stay pending for the next reader.
    pub fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request(id, method, params);
        let (notes, response) = self.response(id);
        for note in notes.into_iter().rev() {
            self.pending.push_front(note);
        }
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// Reads until every id in `ids` is answered; returns all notifications read meanwhile
    /// and the responses by id (whatever order rho answered in).
    pub fn responses(
        &mut self,
        ids: &[u64],
    ) -> (Vec<Value>, std::collections::HashMap<u64, Value>) {
        let mut notes = Vec::new();
        let mut answers = std::collections::HashMap::new();
        while answers.len() < ids.len() {
            let message = self.next_message();
            match message.get("id").and_then(Value::as_u64) {
                Some(id) if ids.contains(&id) => {
                    answers.insert(id, message);
                }
                _ => notes.push(message),
            }
        }
        (notes, answers)
    }

    /// Reads until a notification `method` arrives; returns it.
    pub fn until(&mut self, method: &str) -> Value {
        loop {
            let message = self.next_message();
            if message["method"] == method {
                return message;
            }
        }
    }

    /// Closes stdin and waits for a clean exit.
    /// Sends EOF and returns every message rho writes until it closes stdout (10 s at most),
    /// pending ones first.
    pub fn rest_after_eof(&mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let mut rest: Vec<Value> = self.pending.drain(..).collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Ok(value) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(value.clone());
            rest.push(value);
        }
        rest
    }

    pub fn finish(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "rho did not exit after EOF");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `tools` array of a `rho tools list --json` document.
pub fn listed_tools(list: &Value) -> &Vec<Value> {
    list["tools"].as_array().unwrap()
}

/// The exported names in a `rho tools list --json` document, in mount order.
pub fn listed_names(list: &Value) -> Vec<String> {
    listed_tools(list)
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The entry of tool `name` in a `rho tools list --json` document (panics when missing).
pub fn listed_tool<'a>(list: &'a Value, name: &str) -> &'a Value {
    listed_tools(list)
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {list:#}"))
}
