//! `git session sync`: one fetch and one push of the claims shared through `[claims] remote`
//! (see [`crate::shared_claims`]); cheap enough for cron or a hook.

use crate::cli::error::UserError;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::shared_claims::{self, SharedError};
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
        Err(e) => return Err(remote_error(&e).into()),
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

/// The shared-claims settings, or the refusal that says how to set them.
pub fn require_settings(config: &crate::config::Config) -> Result<shared_claims::Settings> {
    config.shared_claims().ok_or_else(|| {
        UserError::refused("claims are not shared: no [claims] remote is configured")
            .hinted("add to .git-session.toml:  [claims]  remote = \"origin\"")
            .into()
    })
}

/// The one-line answer for a shared-claims failure.
pub fn remote_error(e: &SharedError) -> UserError {
    match e {
        SharedError::Remote { remote, why } => UserError::refused(format!(
            "the claims could not be shared through remote {remote}: {why}"
        ))
        .hinted("nothing was recorded as shared; try again when the remote answers"),
        SharedError::Held(holders) => {
            let first = &holders[0];
            let mut err = UserError::refused(if holders.len() == 1 {
                format!(
                    "{} is held by session \"{}\" on {}",
                    crate::base::quote::show_path(&first.path),
                    first.label,
                    first.host
                )
            } else {
                format!("{} paths are held by other sessions", holders.len())
            });
            for h in holders {
                err = err.detail(format!(
                    "{}: session \"{}\" on {} (clone {}), since {}, until {}",
                    crate::base::quote::show_path(&h.path),
                    h.label,
                    h.host,
                    h.clone,
                    clock::rfc3339(h.since),
                    clock::rfc3339(h.expires)
                ));
            }
            err.hinted(format!(
                "coordinate with session \"{}\"; its claim lapses at its expiry unless renewed",
                first.label
            ))
        }
    }
}
