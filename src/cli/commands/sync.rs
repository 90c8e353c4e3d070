//! `git session sync`: one fetch and one push of the claims shared through `[claims] remote`
//! (see [`crate::shared_claims`]); cheap enough for cron or a hook.

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::shared_claims;
use crate::{base::clock, ownership, session};
use anyhow::Result;

/// Share claims through the remote: fetch others', renew and publish this clone's, report lost
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Needs `[claims] remote` in .git-session.toml or your config. Exit 1 when a claim \
                  of this clone was lost (taken after it lapsed, deleted on the remote) or the \
                  remote could not be reached."
)]
pub struct Args {}

pub fn run(_args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    let settings = require_settings(config)?;
    let records = session::load_all(&cx.store)?;
    let mine: Vec<(String, String, clock::Time)> =
        ownership::claims_with_state(&cx.repo, config, &records)?
            .into_iter()
            .filter(|(_, _, live)| *live)
            .map(|(label, c, _)| (label.to_string(), c.path.clone(), c.since))
            .collect();
    let report = match shared_claims::sync(&cx.repo, &cx.store, &settings, &mine)? {
        Ok(r) => r,
        Err(e) => return Err(crate::cli::words::guard_refusals::shared(&e).into()),
    };
    for (r, why) in &report.garbage {
        output::warn(format!(
            "{r} on {} holds no claim ({why}); ignored",
            settings.remote
        ));
    }
    output::note(format!(
        "claims on {}: {} held, {} renewed, {} published, {} withdrawn",
        settings.remote, report.held, report.renewed, report.published, report.withdrawn
    ));
    if config.resources.ports > 0 {
        renew_blocks(&cx, &settings)?;
    }
    if report.lost.is_empty() {
        return Ok(());
    }
    let mut err = UserError::refused(format!(
        "{} of this clone's claims are lost on {}",
        report.lost.len(),
        settings.remote
    ));
    for (path, label, why) in &report.lost {
        err = err.detail(format!(
            "{} (session \"{label}\"): {why}",
            crate::base::quote::show_path(path)
        ));
    }
    Err(err
        .hinted("coordinate with the holder; `git session release PATH` drops the claim here")
        .into())
}

/// Renews this clone's port blocks on the remote from what the sync fetched, and says which
/// blocks of sessions here the remote no longer holds for this clone (a warning: the session
/// keeps its ports here, but another clone may hand them out).
fn renew_blocks(cx: &CommandHelper, settings: &shared_claims::Settings) -> Result<()> {
    let renewal = match shared_claims::leases::renew(&cx.repo, &cx.store, settings)? {
        Ok(r) => r,
        Err(e) => return Err(crate::cli::words::guard_refusals::shared(&e).into()),
    };
    output::note(format!(
        "port blocks on {}: {} held, {} renewed",
        settings.remote, renewal.held, renewal.renewed
    ));
    for (first, count, label, why) in &renewal.lost {
        output::warn(format!(
            "ports {first}-{} of session \"{label}\" are no longer this clone's on {}: {why}; \
             another clone may hand them out",
            first + count.saturating_sub(1),
            settings.remote
        ));
    }
    Ok(())
}

/// The shared-claims settings, or the refusal that says how to set them.
pub fn require_settings(config: &crate::config::Config) -> Result<shared_claims::Settings> {
    config.shared_claims().ok_or_else(|| {
        UserError::refused("claims are not shared: no [claims] remote is configured")
            .hinted("add to .git-session.toml:  [claims]  remote = \"origin\"")
            .into()
    })
}
