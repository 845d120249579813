//! `rho skills ...`: every skill from every source, with precedence applied.

use std::process::ExitCode;

use anyhow::bail;
use rho_component::{Diagnostic, DiagnosticCode, SkillSource};

use crate::cli::SkillsCommand;
use crate::context::Context;
use crate::output::{clean, diagnostic_line, first_line, json_sorted, out, path_str, table};
use crate::shapes::{
    SkillEntry, SkillIdentity, SkillList, SkillShow, SkillStatus, SkillValidation,
};

pub fn run(ctx: &Context, command: SkillsCommand) -> anyhow::Result<ExitCode> {
    match command {
        SkillsCommand::List => list(ctx),
        SkillsCommand::Show { name } => show(ctx, &name),
        SkillsCommand::Validate { dir } => validate(ctx, &dir),
    }
}

/// Every candidate in precedence order (built-in, loose user, loose project, project plugins,
/// user plugins), and the diagnostics of everything skill-related that was refused.
fn collect(ctx: &Context) -> (rho_skills::Merged, Vec<Diagnostic>) {
    let (mut candidates, mut diags) = rho_builtin_plugins::builtin_skills();
    for root in ctx.paths.user_skill_roots() {
        let (skills, d) = rho_skills::discover_root(&root, SkillSource::User);
        candidates.extend(skills);
        diags.extend(d);
    }
    for root in ctx.paths.project_skill_roots() {
        let (skills, d) = rho_skills::discover_root(&root, SkillSource::Project);
        candidates.extend(skills);
        diags.extend(d);
    }
    let inventory = ctx.plugins.discover();
    for record in inventory.loaded() {
        candidates.extend(record.package.skills.iter().cloned());
        diags.extend(
            record
                .package
                .diagnostics
                .iter()
                .filter(|d| is_skill_diagnostic(d))
                .cloned(),
        );
    }
    let merged = rho_skills::merge(candidates);
    diags.extend(merged.diagnostics.iter().cloned());
    for d in &diags {
        tracing::info!(code = d.code.as_str(), "{}", d.message);
    }
    (merged, diags)
}

fn is_skill_diagnostic(d: &Diagnostic) -> bool {
    match d.code {
        DiagnosticCode::SkillInvalid | DiagnosticCode::SkillsLocationInvalid => true,
        DiagnosticCode::PathEscape => d.message.starts_with("skill"),
        _ => false,
    }
}

fn list(ctx: &Context) -> anyhow::Result<ExitCode> {
    let (merged, diags) = collect(ctx);
    if ctx.json {
        let mut skills: Vec<SkillEntry> = merged
            .skills
            .iter()
            .map(|s| SkillEntry::new(s, SkillStatus::Loaded))
            .collect();
        for lost in &merged.shadowed {
            skills.push(SkillEntry {
                shadowed_by: Some(path_str(&lost.winner_location)),
                ..SkillEntry::new(&lost.skill, SkillStatus::Shadowed)
            });
        }
        json_sorted(&SkillList {
            skills,
            diagnostics: &diags,
        });
        return Ok(ExitCode::SUCCESS);
    }
    let mut rows = vec![
        ["NAME", "SOURCE", "STATUS", "DESCRIPTION"]
            .map(String::from)
            .to_vec(),
    ];
    let all = merged
        .skills
        .iter()
        .map(|s| (s, SkillStatus::Loaded))
        .chain(
            merged
                .shadowed
                .iter()
                .map(|l| (&l.skill, SkillStatus::Shadowed)),
        );
    for (s, status) in all {
        rows.push(vec![
            clean(&s.name),
            clean(&s.source.to_string()),
            status.as_str().into(),
            clean(&first_line(&s.description, 70)),
        ]);
    }
    let mut text = table(&rows);
    if !diags.is_empty() {
        text.push_str(&format!("\n{} diagnostic(s):\n", diags.len()));
        for d in &diags {
            text.push_str(&format!("  {}\n", diagnostic_line(d)));
        }
    }
    out(&text);
    Ok(ExitCode::SUCCESS)
}

fn show(ctx: &Context, name: &str) -> anyhow::Result<ExitCode> {
    let (merged, _) = collect(ctx);
    let Some(skill) = merged.skills.get(name) else {
        bail!("no skill named {name:?} (try `rho skills list`)");
    };
    let (body, resources) = if rho_skills::is_builtin(skill) {
        (
            rho_builtin_plugins::builtin_skill_body(name)
                .unwrap_or_default()
                .to_owned(),
            Vec::new(),
        )
    } else if let Some(plugin) = skill.source.plugin() {
        // Plugin skills are read again under the plugin's containment rules.
        let inventory = ctx.plugins.discover();
        let record = inventory
            .loaded()
            .find(|r| r.name == plugin)
            .ok_or_else(|| anyhow::anyhow!("plugin {plugin:?} is no longer loaded"))?;
        (
            record.read_skill_body(name)?,
            rho_skills::list_resources(skill, 200),
        )
    } else {
        (
            rho_skills::read_body(skill)?,
            rho_skills::list_resources(skill, 200),
        )
    };
    if ctx.json {
        json_sorted(&SkillShow {
            skill: SkillIdentity::of(skill),
            directory: path_str(&skill.directory()),
            license: skill.license.as_deref(),
            compatibility: skill.compatibility.as_deref(),
            metadata: &skill.metadata,
            allowed_tools: skill.allowed_tools.as_deref(),
            resources: resources.iter().map(|p| path_str(p)).collect(),
            body: &body,
        });
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = format!(
        "{} ({})\n{}\n",
        clean(&skill.name),
        clean(&skill.source.to_string()),
        clean(&skill.description)
    );
    t.push_str(&format!("path: {}\n", clean(&path_str(&skill.location))));
    if !resources.is_empty() {
        t.push_str("resources:\n");
        for r in &resources {
            t.push_str(&format!("  {}\n", clean(&path_str(r))));
        }
    }
    t.push('\n');
    // The body is Markdown meant for reading; only terminal control characters are neutralized.
    t.push_str(&crate::output::clean_block(&body));
    t.push('\n');
    out(&t);
    Ok(ExitCode::SUCCESS)
}

fn validate(ctx: &Context, dir: &std::path::Path) -> anyhow::Result<ExitCode> {
    let dir = ctx.arg_path(dir);
    let result = rho_skills::validate_dir(&dir);
    if ctx.json {
        json_sorted(&SkillValidation {
            path: path_str(&dir),
            valid: result.is_ok(),
            name: result.as_ref().ok().map(|skill| skill.name.as_str()),
            problems: result.as_ref().err().map_or(&[], Vec::as_slice),
        });
    } else {
        match &result {
            Ok(skill) => out(&format!(
                "valid skill {} ({})\n",
                clean(&skill.name),
                clean(&path_str(&dir))
            )),
            Err(problems) => {
                let mut t = format!("invalid skill {}:\n", clean(&path_str(&dir)));
                for p in problems {
                    t.push_str(&format!("  - {}\n", clean(p)));
                }
                out(&t);
            }
        }
    }
    Ok(if result.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
