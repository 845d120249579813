//! `rho run`: one prompt to completion through the real binary, against `fake-model`: the
//! answer on stdout and what happened on stderr (snapshot), `--approve`, `--json` (the RPC
//! notification lines), the prompt from stdin, exit codes, sessions kept or not and continued,
//! and no sampling or forms for servers.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use rho_e2e::*;
use serde_json::{Value, json};

const FAKE_MODEL: &str = env!("CARGO_BIN_EXE_fake-model");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp");

fn model(sandbox: &Sandbox, script: &Value) -> FakeModel {
    FakeModel::start(FAKE_MODEL, &sandbox.dir.path().join("model"), script)
}

/// `rho run <args> --endpoint <model> --model fake-model-1`.
fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> Run {
    let endpoint = model.endpoint();
    sandbox.rho(
        &[
            &["run"],
            args,
            &["--endpoint", &endpoint, "--model", "fake-model-1"],
        ]
        .concat(),
    )
}

/// A first turn that reads `notes.txt`, writes `out.txt` and runs a command that would leave
/// `ran.txt`, then the answer.
fn three_calls(sandbox: &Sandbox) -> FakeModel {
    write(&sandbox.project.join("notes.txt"), "the notes say hello\n");
    model(
        sandbox,
        &json!([
            {"tool_calls": [
                {"name": "read_file", "arguments": {"path": "notes.txt"}},
                {"name": "write_file", "arguments": {"path": "out.txt", "content": "written\n"}},
                {"name": "run_command", "arguments": {"command": "touch ran.txt"}}
            ]},
            {"content": "Done: the notes say hello."}
        ]),
    )
}

#[test]
fn the_answer_goes_to_stdout_and_a_call_that_needs_approval_is_refused_and_said() {
    let sandbox = Sandbox::new();
    let model = three_calls(&sandbox);
    let done = run(&sandbox, &model, &["--ephemeral", "summarize the notes"]).ok();
    assert_eq!(done.stdout, "Done: the notes say hello.\n");
    // The default mode (ask-destructive) runs reads and writes; the command needs approval.
    assert!(sandbox.project.join("out.txt").exists());
    assert!(!sandbox.project.join("ran.txt").exists());
    insta::assert_snapshot!("run_human_stderr", done.stderr);
    // The model read why the command did not run.
    let requests = model.requests();
    let last = requests[1]["messages"].as_array().unwrap();
    let refused = last
        .iter()
        .find(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains("denied"));
    assert!(refused.is_some(), "{last:#?}");
}

#[test]
fn approve_all_runs_every_call_and_approve_read_only_reads() {
    let sandbox = Sandbox::new();
    let model = three_calls(&sandbox);
    let done = run(&sandbox, &model, &["--ephemeral", "--approve", "all", "go"]).ok();
    assert!(sandbox.project.join("ran.txt").exists(), "{}", done.stderr);
    assert!(sandbox.project.join("out.txt").exists());
    assert!(!done.stderr.contains("refused"), "{}", done.stderr);

    let sandbox = Sandbox::new();
    let model = three_calls(&sandbox);
    let done = run(
        &sandbox,
        &model,
        &["--ephemeral", "--approve", "read", "go"],
    )
    .ok();
    assert!(!sandbox.project.join("ran.txt").exists());
    assert!(!sandbox.project.join("out.txt").exists());
    assert!(done.stderr.contains("✓ read_file"), "{}", done.stderr);
    assert!(
        done.stderr
            .contains("✗ write_file refused: `--approve read` runs only read tools"),
        "{}",
        done.stderr
    );
    assert_eq!(done.stdout, "Done: the notes say hello.\n");
}

#[test]
fn json_prints_the_rpc_notification_lines_and_nothing_else() {
    let sandbox = Sandbox::new();
    let model = three_calls(&sandbox);
    let done = run(&sandbox, &model, &["--ephemeral", "--json", "go"]).ok();
    let lines: Vec<Value> = done
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    for line in &lines {
        assert_eq!(line["jsonrpc"], "2.0", "{line}");
        assert!(line.get("id").is_none(), "only notifications: {line}");
    }
    let methods: Vec<&str> = lines
        .iter()
        .map(|l| l["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods.first(), Some(&"agent/start"), "{methods:?}");
    assert_eq!(methods.last(), Some(&"agent/end"), "{methods:?}");
    for method in [
        "tool/call",
        "tool/result",
        "approval/request",
        "tool/denied",
        "usage",
    ] {
        assert!(methods.contains(&method), "{method} missing: {methods:?}");
    }
    // The approval request and the denial name the same call.
    let call_id = |method: &str| {
        lines.iter().find(|l| l["method"] == method).unwrap()["params"]["callId"].clone()
    };
    assert_eq!(call_id("approval/request"), call_id("tool/denied"));
    let end = &lines.last().unwrap()["params"];
    assert_eq!(end["reply"], "Done: the notes say hello.", "{end}");
    assert!(done.stderr.is_empty(), "{}", done.stderr);
}

/// `rho run <args>` with `input` on stdin.
fn run_with_stdin(sandbox: &Sandbox, model: &FakeModel, args: &[&str], input: &[u8]) -> Run {
    let endpoint = model.endpoint();
    let mut child = sandbox
        .command(
            &[
                &["run"],
                args,
                &["--endpoint", &endpoint, "--model", "fake-model-1"],
            ]
            .concat(),
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    Run::from(child.wait_with_output().unwrap())
}

#[test]
fn the_prompt_comes_from_stdin_and_a_missing_one_is_a_usage_error() {
    let sandbox = Sandbox::new();
    let model = model(
        &sandbox,
        &json!([{"content": "piped", "expect": {"last_message_contains": "from a pipe"}}]),
    );
    let done = run_with_stdin(
        &sandbox,
        &model,
        &["--ephemeral"],
        b"a prompt from a pipe\n",
    )
    .ok();
    assert_eq!(done.stdout, "piped\n");
    let done = run_with_stdin(&sandbox, &model, &["--ephemeral", "-"], b"   \n").code(2);
    assert_eq!(done.stderr, "error: the prompt is empty\n");
    let done = run_with_stdin(&sandbox, &model, &["--ephemeral"], &[0xff, 0xfe]).code(2);
    assert_eq!(done.stderr, "error: the prompt on stdin is not UTF-8\n");
    let big = vec![b'x'; (1 << 20) + 1];
    let done = run_with_stdin(&sandbox, &model, &["--ephemeral"], &big).code(2);
    assert_eq!(done.stderr, "error: the prompt on stdin is over 1 MiB\n");
    let done = sandbox.rho(&["run", "--approve", "sometimes", "x"]).code(2);
    assert!(done.stderr.contains("never, read, all"), "{}", done.stderr);
    assert_eq!(
        model.requests().len(),
        1,
        "only the piped prompt reached the model"
    );
}

#[test]
fn a_model_that_cannot_be_reached_fails_the_run() {
    let sandbox = Sandbox::new();
    let unreachable = |json: &[&str]| {
        let mut args = vec!["run", "--ephemeral"];
        args.extend(json);
        args.extend([
            "--endpoint",
            "http://127.0.0.1:1/v1",
            "--model",
            "m",
            "hello",
        ]);
        sandbox.rho(&args).code(1)
    };
    let done = unreachable(&[]);
    assert!(done.stdout.is_empty(), "{}", done.stdout);
    assert!(done.stderr.starts_with("error: "), "{}", done.stderr);
    let said = done.stderr.lines().filter(|l| l.starts_with("error: "));
    assert_eq!(said.count(), 1, "said once: {}", done.stderr);
    // With --json too: the failure is an agent/error line and, for a person, on stderr.
    let done = unreachable(&["--json"]);
    assert!(done.stdout.contains("\"agent/error\""), "{}", done.stdout);
    let said = done.stderr.lines().filter(|l| l.starts_with("error: "));
    assert_eq!(said.count(), 1, "said once: {}", done.stderr);
}

#[test]
fn a_piped_answer_keeps_its_bytes() {
    let sandbox = Sandbox::new();
    let makefile = "all:\n\techo built\n";
    let model = model(&sandbox, &json!([{"content": makefile}]));
    let done = run(&sandbox, &model, &["--ephemeral", "write a Makefile"]).ok();
    assert_eq!(done.stdout, makefile);
}

#[test]
fn a_run_is_saved_and_continued_unless_ephemeral() {
    let sandbox = Sandbox::new();
    let sessions = sandbox.rho_home.join("sessions");
    let model = model(
        &sandbox,
        &json!([
            {"content": "first answer"},
            {"content": "second answer", "expect": {"any_message_contains": "first answer"}},
            {"content": "alone", "expect": {"last_message_contains": "third"}}
        ]),
    );
    run(&sandbox, &model, &["remember this"]).ok();
    assert_eq!(session_files(&sessions), 1);
    let done = run(&sandbox, &model, &["--continue", "and then?"]).ok();
    assert_eq!(done.stdout, "second answer\n");
    assert_eq!(session_files(&sessions), 1, "continued in the same file");
    run(&sandbox, &model, &["--ephemeral", "third"]).ok();
    assert_eq!(
        session_files(&sessions),
        1,
        "an ephemeral run writes nothing"
    );
    let third = &model.requests()[2];
    assert_eq!(third["messages"].as_array().unwrap().len(), 2, "{third:#}");
}

/// The session files (`*.jsonl`) below `dir`.
fn session_files(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                session_files(&path)
            } else {
                usize::from(path.extension() == Some("jsonl".as_ref()))
            }
        })
        .sum()
}

#[test]
fn servers_get_no_sampling_and_no_forms() {
    let sandbox = Sandbox::new();
    let record = sandbox.dir.path().join("record");
    sandbox.write_config(&format!(
        "[mcp.servers.flood]\ncommand = {FAKE:?}\nargs = [\"--mode\", \"sampling-flood\", \"--record\", {record:?}]\nsampling = \"ask\"\n",
        record = record.display().to_string()
    ));
    let flood = rho_component::naming::ExportedNames::default().assign("flood", "flood");
    let model = model(
        &sandbox,
        &json!([
            {"tool_calls": [{"name": flood, "arguments": {"count": 1}}]},
            {"content": "carried on", "expect": {"last_message_contains": "no sampling"}}
        ]),
    );
    let done = run(
        &sandbox,
        &model,
        &["--ephemeral", "--approve", "all", "flood"],
    )
    .ok();
    assert_eq!(done.stdout, "carried on\n");
    let recorded = std::fs::read_to_string(&record).unwrap();
    let initialize = recorded
        .lines()
        .find_map(|l| l.strip_prefix("initialize "))
        .unwrap();
    let params: Value = serde_json::from_str(initialize).unwrap();
    let capabilities = &params["capabilities"];
    assert!(capabilities.get("sampling").is_none(), "{capabilities}");
    assert!(capabilities.get("elicitation").is_none(), "{capabilities}");
}

#[test]
fn json_lines_carry_no_raw_control_or_invisible_character() {
    // U+009B is a one-character escape sequence introducer on some terminals; U+202E reverses
    // the text after it. Both stay in the value, escaped in the JSON.
    let sneaky = "red\u{9b}31m text \u{202e}desrever";
    let sandbox = Sandbox::new();
    let model = model(&sandbox, &json!([{"content": sneaky}]));
    let done = run(&sandbox, &model, &["--ephemeral", "--json", "go"]).ok();
    assert!(
        !done.stdout.contains('\u{9b}') && !done.stdout.contains('\u{202e}'),
        "{}",
        done.stdout
    );
    assert!(done.stdout.contains("\\u009b"), "{}", done.stdout);
    let end: Value = serde_json::from_str(done.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(end["params"]["reply"], sneaky);
}
