//! `git session release [PATH...|--all]`: give up claims of the acting session.

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::ownership;
use anyhow::Result;
use std::ffi::OsString;

/// Release the current session's claims on paths (or all of them)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Paths, relative to the current directory like git pathspecs
    #[arg(value_name = "PATH", conflicts_with = "all")]
    pub paths: Vec<OsString>,
    /// Release every claim of the session
    #[arg(long)]
    pub all: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    if !args.all && args.paths.is_empty() {
        return Err(UserError::usage("name the paths to release, or --all")
            .hinted("git session release src/lib.rs, or git session release --all")
            .into());
    }
    let paths = args
        .paths
        .iter()
        .map(|p| ownership::RepoPath::from_arg(&cx.repo, p))
        .collect::<Result<Vec<_>>>()?;
    let label = cx.require_acting("release")?;
    let released = ownership::release(&cx.repo, &label, (!args.all).then_some(paths.as_slice()))?;
    for path in &released {
        output::note(format!(
            "released {} (session \"{label}\")",
            crate::base::quote::show_path(path)
        ));
    }
    for path in &paths {
        if !released.iter().any(|r| *path == *r) {
            output::warn(format!(
                "session \"{label}\" had no claim on {}",
                crate::base::quote::show_path(path)
            ));
        }
    }
    if args.all && released.is_empty() {
        output::note(format!("session \"{label}\" had no claims"));
    }
    if let Some(settings) = cx.config()?.shared_claims() {
        let which: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        let shared = crate::shared_claims::release(
            &cx.repo,
            &cx.store,
            &settings,
            &label,
            (!args.all).then_some(which.as_slice()),
        )?;
        if let Err(e) = shared {
            return Err(crate::cli::words::guard_refusals::shared(&e)
                .hinted(format!(
                    "released here; on {} the claim stays until it lapses or the next \
                     `git session sync`",
                    settings.remote
                ))
                .into());
        }
    }
    Ok(())
}
