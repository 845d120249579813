//! `rho doctor`: the health report of `rho_core::doctor` (config, Agent Plugins, plugin trust,
//! skills, MCP servers, providers), each row `ok`, `warning` or `error` with a short detail.
//! Exit code 1 when any row is an error.

use std::process::ExitCode;

use rho_core::doctor::{CheckStatus, Servers};
use rho_core::{MountOptions, ProviderFlags};

use crate::context::Context;
use crate::output::{clean, json_sorted, out, table};
use crate::runtime;
use crate::shapes::DoctorReport;

pub fn run(ctx: &Context, connect: bool) -> anyhow::Result<ExitCode> {
    let registry = ctx.registry_reporting_config();
    let flags = ProviderFlags::default();
    let ambient = |name: &str| std::env::var(name).ok();
    let rows = runtime::run(|_| async {
        let rows = if connect && registry.startable_servers().count() > 0 {
            let set = registry
                .mount(&MountOptions {
                    connect_mcp: true,
                    keep_alive: None,
                    ..MountOptions::default()
                })
                .await;
            let rows =
                rho_core::doctor::checks(&registry, Servers::Live(&set.servers), &flags, &ambient)
                    .await;
            set.close().await;
            rows
        } else {
            let servers = Servers::NotStarted {
                by_choice: !connect,
            };
            rho_core::doctor::checks(&registry, servers, &flags, &ambient).await
        };
        Ok(rows)
    })?;
    let failed = rows.iter().any(|r| r.status == CheckStatus::Error);
    if ctx.json {
        json_sorted(&DoctorReport {
            checks: &rows,
            ok: !failed,
        });
    } else {
        let mut table_rows = vec![vec!["CHECK".into(), "STATUS".into(), "DETAIL".into()]];
        for row in &rows {
            table_rows.push(vec![
                row.check.as_str().into(),
                row.status.as_str().into(),
                clean(&row.detail),
            ]);
        }
        out(&table(&table_rows));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
