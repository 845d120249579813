//! `rho skills list/show/validate` through the real binary: five sources, one precedence order.

use rho_e2e::*;
use serde_json::Value;

fn skill<'a>(list: &'a Value, name: &str, status: &str) -> &'a Value {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name && s["status"] == status)
        .unwrap_or_else(|| panic!("no {status} skill {name} in {list:#}"))
}

#[test]
fn precedence_is_builtin_user_project_project_plugins_user_plugins() {
    let sb = Sandbox::new();
    let user_loose = sb.home.join(".agents/skills");
    let rho_loose = sb.rho_home.join("skills");
    let project_loose = sb.project.join(".agents/skills");
    let project_rho = sb.project.join(".rho/skills");
    let pp = sb.project_plugins().join("pp");
    let up = sb.user_plugins().join("up");
    make_plugin(&pp, "pp");
    make_plugin(&up, "up");
    // Each name is defined by a chain of sources; the first listed must win.
    make_skill(
        &user_loose,
        "rho-plugin-authoring",
        "Imposter of the built-in. Use never.",
    );
    make_skill(&user_loose, "a-user", "User wins. Use when testing.");
    make_skill(
        &project_loose,
        "a-user",
        "Project loses to user. Use when testing.",
    );
    make_skill(
        &project_loose,
        "b-project",
        "Project wins. Use when testing.",
    );
    make_skill(
        &pp.join("skills"),
        "b-project",
        "Project plugin loses. Use when testing.",
    );
    make_skill(
        &pp.join("skills"),
        "c-pplugin",
        "Project plugin wins. Use when testing.",
    );
    make_skill(
        &up.join("skills"),
        "c-pplugin",
        "User plugin loses. Use when testing.",
    );
    make_skill(
        &up.join("skills"),
        "d-uplugin",
        "User plugin only. Use when testing.",
    );
    make_skill(&rho_loose, "e-rho-home", "From RHO_HOME. Use when testing.");
    make_skill(
        &project_rho,
        "f-project-rho",
        "From .rho/skills. Use when testing.",
    );
    let list = sb.rho(&["skills", "list", "--json"]).ok().json();

    let builtin = skill(&list, "rho-plugin-authoring", "loaded");
    assert_eq!(builtin["source"], "builtin");
    assert_eq!(builtin["path"], "builtin:/rho-plugin-authoring/SKILL.md");
    assert_eq!(skill(&list, "a-user", "loaded")["source"], "user");
    assert_eq!(skill(&list, "b-project", "loaded")["source"], "project");
    let c = skill(&list, "c-pplugin", "loaded");
    assert_eq!(c["source"], "project-plugin");
    assert_eq!(c["plugin"], "pp");
    assert_eq!(skill(&list, "d-uplugin", "loaded")["source"], "user-plugin");
    assert_eq!(skill(&list, "e-rho-home", "loaded")["source"], "user");
    assert_eq!(skill(&list, "f-project-rho", "loaded")["source"], "project");

    let shadowed: Vec<(String, String)> = list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "shadowed")
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(shadowed.len(), 4, "{shadowed:?}");
    for (name, source) in [
        ("rho-plugin-authoring", "user"),
        ("a-user", "project"),
        ("b-project", "project-plugin"),
        ("c-pplugin", "user-plugin"),
    ] {
        assert!(
            shadowed.contains(&(name.into(), source.into())),
            "{name} from {source}"
        );
    }
    // Each loser is a skill-shadowed diagnostic naming both sides.
    let diags: Vec<&Value> = list["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "skill-shadowed")
        .collect();
    assert_eq!(diags.len(), 4);
    let d = diags
        .iter()
        .find(|d| d["component"] == "c-pplugin")
        .unwrap();
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("plugin up (user)") && message.contains("plugin pp (project)"),
        "{message}"
    );
    assert_eq!(
        skill(&list, "c-pplugin", "shadowed")["shadowed_by"],
        pp.join("skills/c-pplugin/SKILL.md").to_str().unwrap()
    );
}

#[test]
fn nearest_project_directory_wins_and_invalid_loose_skills_are_reported() {
    let sb = Sandbox::new();
    let sub = sb.project.join("pkg");
    make_skill(
        &sub.join(".agents/skills"),
        "near",
        "Nearest. Use when testing.",
    );
    make_skill(
        &sb.project.join(".agents/skills"),
        "near",
        "Farther. Use when testing.",
    );
    write(
        &sb.project.join(".agents/skills/broken/SKILL.md"),
        "---\nname: Broken\ndescription: x\n---\n",
    );
    let list = sb.rho_in(&sub, &["skills", "list", "--json"]).ok().json();
    let near = skill(&list, "near", "loaded");
    assert!(
        near["path"]
            .as_str()
            .unwrap()
            .starts_with(sub.to_str().unwrap())
    );
    let invalid: Vec<&Value> = list["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "skill-invalid")
        .collect();
    assert_eq!(invalid.len(), 1);
    assert!(
        invalid[0]["message"]
            .as_str()
            .unwrap()
            .contains("lowercase")
            || invalid[0]["message"].as_str().unwrap().contains("Broken")
    );
}

#[test]
fn plugin_skill_problems_appear_in_skills_list() {
    let sb = Sandbox::new();
    copy_tree(
        &fixture("plugins/skills-mixed"),
        &sb.user_plugins().join("skills-mixed"),
    );
    let list = sb.rho(&["skills", "list", "--json"]).ok().json();
    assert_eq!(skill(&list, "good", "loaded")["plugin"], "skills-mixed");
    let codes: Vec<&str> = list["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == "skill-invalid").count(),
        3,
        "{codes:?}"
    );
}

#[test]
fn show_prints_body_and_resources() {
    let sb = Sandbox::new();
    let dir = sb.home.join(".agents/skills/report");
    write(
        &dir.join("SKILL.md"),
        "---\nname: report\ndescription: Write reports. Use when asked for one.\nmetadata:\n  version: 1.0\n---\n\n# Report\n\nSee references/guide.md.\n",
    );
    write(&dir.join("references/guide.md"), "guide");
    write(&dir.join("scripts/run.sh"), "#!/bin/sh\n");
    let shown = sb.rho(&["skills", "show", "report", "--json"]).ok().json();
    assert_eq!(shown["body"], "# Report\n\nSee references/guide.md.");
    assert_eq!(
        strings(&shown["resources"]),
        ["references/guide.md", "scripts/run.sh"]
    );
    assert_eq!(shown["metadata"]["version"], "1.0");
    assert_eq!(shown["directory"], dir.to_str().unwrap());
    let text = sb.rho(&["skills", "show", "report"]).ok().stdout;
    assert!(
        text.contains("# Report") && text.contains("references/guide.md"),
        "{text}"
    );
    let builtin = sb
        .rho(&["skills", "show", "rho-plugin-authoring"])
        .ok()
        .stdout;
    assert!(builtin.contains("# Writing a rho plugin"), "{builtin}");
    assert!(
        sb.rho(&["skills", "show", "nope"])
            .code(1)
            .stderr
            .contains("no skill named")
    );
}

#[test]
fn validate_matches_the_spec_and_accepts_the_file_path() {
    let sb = Sandbox::new();
    let good = fixture("plugins/full/skills/summarize");
    let run = sb
        .rho(&["skills", "validate", good.to_str().unwrap(), "--json"])
        .ok()
        .json();
    assert_eq!(run["valid"], true);
    assert_eq!(run["name"], "summarize");
    sb.rho(&[
        "skills",
        "validate",
        good.join("SKILL.md").to_str().unwrap(),
    ])
    .ok();
    let bad = fixture("plugins/skills-mixed/skills/mismatch");
    let run = sb
        .rho(&["skills", "validate", bad.to_str().unwrap(), "--json"])
        .code(1)
        .json();
    assert_eq!(run["valid"], false);
    assert!(
        run["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().contains("mismatch")),
        "{run:#}"
    );
    let human = sb
        .rho(&["skills", "validate", bad.to_str().unwrap()])
        .code(1)
        .stdout;
    assert!(human.starts_with("invalid skill"), "{human}");
}

#[test]
fn skills_ref_agrees_through_the_binary() {
    // The library-level parity test covers the whole corpus; this checks the CLI gives the same
    // verdict as the reference validator on a valid and an invalid directory.
    let reference = ["skills-ref", "agentskills"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--help")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .unwrap_or_else(|| panic!("skills-ref is not installed: pip install skills-ref==0.1.1"));
    let sb = Sandbox::new();
    for (dir, valid) in [
        (fixture("plugins/full/skills/summarize"), true),
        (fixture("plugins/skills-mixed/skills/mismatch"), false),
    ] {
        let theirs = std::process::Command::new(reference)
            .arg("validate")
            .arg(&dir)
            .output()
            .unwrap()
            .status
            .success();
        let ours = sb.rho(&["skills", "validate", dir.to_str().unwrap()]).code == 0;
        assert_eq!((theirs, ours), (valid, valid), "{}", dir.display());
    }
}

#[test]
fn show_reads_plugin_skills_under_containment() {
    let sb = Sandbox::new();
    copy_tree(&fixture("plugins/full"), &sb.user_plugins().join("full"));
    let shown = sb
        .rho(&["skills", "show", "summarize", "--json"])
        .ok()
        .json();
    assert_eq!(shown["plugin"], "full.plugin");
    assert_eq!(shown["body"], "# summarize\n\nBody.");
}
