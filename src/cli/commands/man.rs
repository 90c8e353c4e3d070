//! `git session man [DIR]`: man pages generated from the clap command tree.
//!
//! Without DIR the pages go where `man` finds them for this binary, so `git session --help`
//! (which git turns into `man git-session`) works after a `cargo install`: man-db searches
//! `<prefix>/share/man` for every `<prefix>/bin` on `PATH`, so a binary in `~/.cargo/bin` gets
//! `~/.cargo/share/man/man1`. A binary outside a `bin` directory falls back to the XDG data
//! directory (`~/.local/share/man/man1`).
//!
//! One page for the top command (`git-session.1`) and one for every subcommand at any depth
//! (`git-session-create.1`, `git-session-handoff-write.1`, ...), named the way `man` looks for
//! git subcommands, so `man git-session-create` finds its page. clap's `help` pseudo-command is
//! no command of ours and gets no page.
//!
//! Invariant: the pages depend only on the command tree (no date, no environment), so the
//! checked-in copies under `man/man1/` can be compared byte for byte (tests/it/generated.rs).

use crate::cli::output;
use crate::cli::user_error::UserError;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Write man pages for git-session and each of its subcommands into a directory
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory to write the pages into (created when missing) [default: <prefix>/share/man/man1
    /// beside this binary's <prefix>/bin, where man finds them]
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Every page as (file name, roff text), the top command first.
pub fn pages() -> Result<Vec<(String, Vec<u8>)>> {
    // Pages for real commands only: clap's `help` pseudo-command (and its copy of the whole
    // tree, `git-session-help-create` ...) is left out, and left out of the pages' lists too.
    let mut cmd = without_help_command(crate::cli::command());
    // Building fills in each subcommand's display name (`git-session-create`), which becomes
    // its page's title and file name.
    cmd.build();
    let version = cmd.get_version().unwrap_or_default().to_string();
    let mut out = Vec::new();
    collect(&cmd, &version, &mut out)?;
    Ok(out)
}

fn without_help_command(cmd: clap::Command) -> clap::Command {
    cmd.disable_help_subcommand(true)
        .mut_subcommands(without_help_command)
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

/// Where `man` looks for this binary's pages (see the module doc).
fn default_dir() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("finding this binary's path")?;
    if let Some(bin) = exe
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "bin"))
    {
        if let Some(prefix) = bin.parent() {
            return Ok(prefix.join("share/man/man1"));
        }
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .ok_or_else(|| {
            UserError::refused("no place for the man pages: HOME is not set")
                .hinted("name a directory: git session man DIR")
        })?;
    Ok(data.join("man/man1"))
}

pub fn run(args: Args) -> Result<()> {
    let dir = match args.dir {
        Some(d) => d,
        None => default_dir()?,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(
            UserError::refused(format!("{} exists and is not a directory", dir.display()))
                .hinted("name a directory to write the man pages into, such as man/")
                .into(),
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let pages = pages()?;
    for (name, text) in &pages {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        output::line(path.display().to_string())?;
    }
    output::note(format!(
        "wrote {} man pages to {}; `git session --help` opens the first where man searches \
         this directory (else view it with `man -l {}`)",
        pages.len(),
        dir.display(),
        dir.join("git-session.1").display()
    ));
    Ok(())
}
