//! `git session completions SHELL`: a completion script generated from the clap command tree.
//!
//! The scripts complete the binary name users type, `git-session`, and `git session ...` too
//! (bash, zsh and fish; how each shell's git completion is bridged is in [`shells`]). Where a
//! command takes an existing session's label (`info`, `cleanup`, `setup`, `handoff show|list`,
//! `handoff write --session`, ...), bash, zsh and fish offer the labels of the repository's
//! sessions, read by the binary at TAB time ([`labels`]).
//!
//! Install: bash, `~/.local/share/bash-completion/completions/git-session` (git's completion
//! loads it by that name for `git session`) or sourced from `~/.bashrc`; zsh, a directory on
//! `$fpath` as `_git-session` (zsh's `_git` calls `_git-session` for `git session`); fish,
//! `~/.config/fish/conf.d/git-session.fish`, read at startup, so the `git session` bridge is in
//! place before fish's git completion runs (`~/.config/fish/completions/` serves `git-session`
//! alone, and `git session` only on fish versions that forward it themselves).
//!
//! Invariant: the output depends only on the command tree, never on the environment, so the
//! checked-in copies under `completions/` can be compared byte for byte (tests/it/generated.rs).

pub mod labels;
pub mod shells;

use crate::cli::output;
use anyhow::{Context, Result};
use clap_complete::Shell;

/// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The name users type, and the one the scripts complete.
pub const BIN_NAME: &str = "git-session";

/// The completion script for one shell.
pub fn script(shell: Shell) -> Result<String> {
    let tree = crate::cli::command();
    let label_args = labels::label_args(&tree);
    let mut cmd = match shell {
        Shell::Zsh | Shell::Fish => shells::mark_labels(tree),
        _ => tree,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN_NAME, &mut buf);
    let text = String::from_utf8(buf).context("the generated completion script")?;
    Ok(match shell {
        Shell::Bash => shells::bash(&text),
        Shell::Zsh => shells::zsh(&text),
        Shell::Fish => shells::fish(&text, &label_args),
        _ => text,
    })
}

pub fn run(args: Args) -> Result<()> {
    let text = script(args.shell)?;
    // Through `output` so that `git session completions bash | head` exits quietly.
    output::line(text.strip_suffix('\n').unwrap_or(&text))?;
    Ok(())
}
