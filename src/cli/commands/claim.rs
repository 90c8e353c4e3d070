//! `git session claim PATH...`: explicit ownership of paths for the acting session.

use crate::base::clock;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::ownership;
use crate::session::ClaimHow;
use anyhow::Result;
use std::ffi::OsString;

/// Claim paths for the current session (first claim wins; a directory covers what is below it)
#[derive(Debug, clap::Args)]
#[command(after_help = "The session is GIT_SESSION, else the one session of this worktree.")]
pub struct Args {
    /// Paths, relative to the current directory like git pathspecs
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<OsString>,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    let paths = args
        .paths
        .iter()
        .map(|p| ownership::RepoPath::from_arg(&cx.repo, p))
        .collect::<Result<Vec<_>>>()?;
    let label = cx.require_acting("claim")?;
    let held_before: Vec<String> =
        ownership::claims_with_state(&cx.repo, config, &crate::session::load_all(&cx.store)?)?
            .into_iter()
            .filter(|(l, _, _)| *l == label)
            .map(|(_, c, _)| c.path)
            .collect();
    let refused = ownership::claim(&cx.repo, config, &label, &paths, ClaimHow::Explicit)?;
    if let (true, Some(settings)) = (refused.is_empty(), config.shared_claims()) {
        // Published before this returns; refused there, the claim is taken back here too.
        let wanted: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let shared = crate::shared_claims::claim(&cx.repo, &cx.store, &settings, &label, &wanted)?;
        if let Err(e) = shared {
            let added: Vec<ownership::RepoPath> = paths
                .iter()
                .filter(|p| !held_before.iter().any(|h| h == p.as_str()))
                .cloned()
                .collect();
            if !added.is_empty() {
                ownership::release(&cx.repo, &label, Some(&added))?;
            }
            return Err(crate::cli::words::guard_refusals::shared(&e).into());
        }
    }
    for path in &paths {
        // Refused when the owner's path is this path, above it, or (a directory claim) below it.
        let covers = |a: &str, b: &str| a == b || b.starts_with(&format!("{a}/"));
        if !refused
            .iter()
            .any(|o| covers(&o.path, path) || covers(path, &o.path))
        {
            output::note(format!(
                "claimed {} for session \"{label}\"",
                crate::base::quote::show_path(path)
            ));
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    let now = clock::now();
    let first = &refused[0];
    let mut err = UserError::refused(if refused.len() == 1 {
        format!(
            "{} is already claimed by session \"{}\"",
            crate::base::quote::show_path(&first.path),
            first.label
        )
    } else {
        format!(
            "{} paths are already claimed by other sessions",
            refused.len()
        )
    });
    for o in &refused {
        err = err.detail(format!(
            "{}: session \"{}\" ({} since {}, last activity {})",
            crate::base::quote::show_path(&o.path),
            o.label,
            ownership::how_phrase(o.how),
            clock::rfc3339(o.since),
            output::ago(o.last_activity, now)
        ));
    }
    Err(err
        .hinted(format!(
            "coordinate with session \"{}\", or ask it to run `git session release`",
            first.label
        ))
        .into())
}
