#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! rho's `SKILL.md` validation agrees with the reference validator, `skills-ref` 0.1.1, on every
//! case of `tests/fixtures/skills/corpus`, except the documented divergences.

use std::collections::BTreeMap;
use std::env;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const SKILLS_REF_VERSION: &str = "0.1.1";
const INSTALL_HINT: &str = "pip install skills-ref==0.1.1";
const MIN_CASES: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Valid,
    Invalid,
}

impl Verdict {
    fn parse(word: &str) -> Option<Self> {
        match word {
            "valid" => Some(Self::Valid),
            "invalid" => Some(Self::Invalid),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Valid => "valid",
            Self::Invalid => "invalid",
        })
    }
}

struct Case {
    name: String,
    skill_dir: PathBuf,
    /// rho's verdict, from the case name's prefix.
    rho: Verdict,
}

struct Divergence {
    rho: Verdict,
    skills_ref: Verdict,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/skills/corpus")
}

fn load_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for entry in fs::read_dir(corpus_dir()).expect("corpus directory") {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name().into_string().unwrap();
        let rho = if name.starts_with("valid-") {
            Verdict::Valid
        } else if name.starts_with("invalid-") {
            Verdict::Invalid
        } else {
            panic!("case `{name}` must start with `valid-` or `invalid-`");
        };
        let inner: Vec<PathBuf> = fs::read_dir(entry.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(
            inner.len(),
            1,
            "case `{name}` must hold exactly one skill directory"
        );
        cases.push(Case {
            name,
            skill_dir: inner.into_iter().next().unwrap(),
            rho,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    cases
}

/// Reads the rows of `DIVERGENCES.md` whose first cell is a back-quoted case name.
fn load_divergences() -> BTreeMap<String, Divergence> {
    let text = fs::read_to_string(corpus_dir().join("DIVERGENCES.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "| `case` | rho | skills-ref | reason |" splits into ["", case, rho, ref, reason, ""].
        if cells.len() < 6 || !cells[1].starts_with('`') {
            continue;
        }
        let case = cells[1].trim_matches('`').to_owned();
        let rho = Verdict::parse(cells[2]).unwrap_or_else(|| panic!("bad rho verdict: {line}"));
        let skills_ref =
            Verdict::parse(cells[3]).unwrap_or_else(|| panic!("bad skills-ref verdict: {line}"));
        assert!(!cells[4].is_empty(), "divergence `{case}` needs a reason");
        assert!(
            out.insert(case.clone(), Divergence { rho, skills_ref })
                .is_none(),
            "divergence `{case}` listed twice"
        );
    }
    out
}

/// The `skills-ref` command: `$RHO_SKILLS_REF`, else `skills-ref` or `agentskills` (the name
/// the 0.1.1 wheel installs its console script under) on `PATH`.
fn skills_ref_command() -> PathBuf {
    if let Some(explicit) = env::var_os("RHO_SKILLS_REF") {
        return PathBuf::from(explicit);
    }
    let path = env::var_os("PATH").unwrap_or_default();
    for name in ["skills-ref", "agentskills"] {
        for dir in env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "skills-ref is not installed: neither `skills-ref` nor `agentskills` is on PATH. \
         Install the reference validator with `{INSTALL_HINT}` (or set RHO_SKILLS_REF)"
    );
}

fn check_version(command: &Path) {
    let output = Command::new(command)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL_HINT}", command.display()));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && text.contains(SKILLS_REF_VERSION),
        "{} reports {:?}; this corpus is pinned to skills-ref {SKILLS_REF_VERSION}: {INSTALL_HINT}",
        command.display(),
        text.trim()
    );
}

fn run_skills_ref(command: &Path, dir: &Path) -> Result<Verdict, String> {
    let output = Command::new(command)
        .arg("validate")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", command.display()))?;
    match output.status.code() {
        Some(0) => Ok(Verdict::Valid),
        // 1 is "validation errors" (or an uncaught exception, which is also a refusal).
        Some(1) => Ok(Verdict::Invalid),
        other => Err(format!(
            "skills-ref exited with {other:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

fn run_rho(dir: &Path) -> (Verdict, Vec<String>) {
    match rho_skills::validate_dir(dir) {
        Ok(_) => (Verdict::Valid, Vec::new()),
        Err(problems) => (Verdict::Invalid, problems),
    }
}

#[test]
fn rho_agrees_with_skills_ref() {
    let command = skills_ref_command();
    check_version(&command);
    let cases = load_cases();
    let divergences = load_divergences();
    assert!(
        cases.len() >= MIN_CASES,
        "the corpus has {} cases; keep at least {MIN_CASES}",
        cases.len()
    );
    for name in divergences.keys() {
        assert!(
            cases.iter().any(|c| &c.name == name),
            "DIVERGENCES.md lists `{name}`, which is not a corpus case"
        );
    }

    // skills-ref is a Python program; run a few at a time.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let chunk = cases.len().div_ceil(workers);
    let reference: Vec<Result<Verdict, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|part| {
                let command = &command;
                scope.spawn(move || {
                    part.iter()
                        .map(|case| run_skills_ref(command, &case.skill_dir))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });

    let mut failures = Vec::new();
    for (case, reference) in cases.iter().zip(reference) {
        let name = &case.name;
        let skills_ref = match reference {
            Ok(verdict) => verdict,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let (rho, problems) = run_rho(&case.skill_dir);
        if rho != case.rho {
            failures.push(format!(
                "{name}: rho says {rho}, the case name says {}; problems: {problems:?}",
                case.rho
            ));
        }
        if rho == Verdict::Invalid {
            if problems.is_empty() {
                failures.push(format!("{name}: invalid without a reported problem"));
            }
            for p in &problems {
                if p.starts_with(char::is_uppercase) {
                    failures.push(format!("{name}: message not lower case: {p}"));
                }
            }
        }
        match divergences.get(name) {
            None if skills_ref != rho => failures.push(format!(
                "{name}: rho says {rho}, skills-ref says {skills_ref} (not a listed divergence); \
                 rho problems: {problems:?}"
            )),
            Some(d) if d.rho != rho || d.skills_ref != skills_ref => failures.push(format!(
                "{name}: DIVERGENCES.md says rho {} / skills-ref {}, got rho {rho} / \
                 skills-ref {skills_ref}",
                d.rho, d.skills_ref
            )),
            _ => {}
        }
        // Naming the SKILL.md itself gives the same verdict as naming its directory.
        let file = case.skill_dir.join(rho_skills::SKILL_FILE);
        if fs::metadata(&file).is_ok_and(|m| m.is_file()) && run_rho(&file).0 != rho {
            failures.push(format!(
                "{name}: validating SKILL.md itself gives another verdict"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases disagree:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
