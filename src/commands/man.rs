//! `git session man DIR`: man pages generated from the clap command tree.
//!
//! One page for the top command (`git-session.1`) and one for every subcommand at any depth
//! (`git-session-create.1`, `git-session-handoff-write.1`, ...), named the way `man` looks for
//! git subcommands, so `man git-session-create` finds its page.
//!
//! Invariant: the pages depend only on the command tree (no date, no environment), so the
//! checked-in copies under `man/man1/` can be compared byte for byte (tests/generated.rs).

use crate::error::UserError;
use crate::output;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Write man pages for git-session and each of its subcommands into a directory
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to write the pages into (created when missing)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// Every page as (file name, roff text), the top command first.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = crate::cli::command();
    // Building fills in each subcommand's display name (`git-session-create`), which becomes
    // its page's title and file name.
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let mut out = Vec::new();
    collect(&cmd, &version, &mut out)?;
    Ok(out)
}

fn collect(cmd: &clap::Command, version: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("git-session {version}"))
        .manual("git-session manual");
    let mut buf = Vec::new();
    man.render(&mut buf)
        .with_context(|| format!("rendering the man page {}", man.get_filename()))?;
    out.push((man.get_filename(), buf));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect(sub, version, out)?;
    }
    Ok(())
}

pub fn run(args: Args) -> Result<()> {
    if args.dir.exists() && !args.dir.is_dir() {
        return Err(UserError::refused(format!(
            "{} exists and is not a directory",
            args.dir.display()
        ))
        .hinted("name a directory to write the man pages into, such as man/")
        .into());
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let pages = pages()?;
    for (name, text) in &pages {
        let path = args.dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        output::line(path.display().to_string())?;
    }
    output::note(format!(
        "wrote {} man pages to {}; view one with `man -l {}`",
        pages.len(),
        args.dir.display(),
        args.dir.join("git-session.1").display()
    ));
    Ok(())
}
