//! `git session completions SHELL`: a completion script generated from the clap command tree.
//!
//! The scripts complete the binary name users type, `git-session`, and, where the shell's git
//! completion dispatches to external commands, `git session ...` as well:
//! - bash: git's completion (git-completion.bash) completes `git session <TAB>` by calling a
//!   function `_git_session`; when none is defined it first asks bash-completion to load the file
//!   named `git-session`. The bash script therefore ends with a `_git_session` that rewrites the
//!   words into the `git-session ...` form and calls the generated function. Installed as
//!   `~/.local/share/bash-completion/completions/git-session` (or sourced from `~/.bashrc`), both
//!   `git-session <TAB>` and `git session <TAB>` work.
//! - zsh: zsh's `_git` calls `_git-session` for `git session`, which is the function the
//!   generated `_git-session` file defines; put it in a directory on `$fpath`.
//!
//! Invariant: the output depends only on the command tree, never on the environment, so the
//! checked-in copies under `completions/` can be compared byte for byte (tests/generated.rs).

use crate::output;
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

/// Lets `git session <TAB>` use the generated bash function (see the module doc).
const BASH_GIT_BRIDGE: &str = r#"
# `git session <TAB>`: git's bash completion calls `_git_session` for the `session` subcommand
# (loading this file by the name git-session through bash-completion when needed). Rewrite the
# words from `git [global options] session ...` to `git-session ...` and complete those.
_git_session() {
    local _gs_i=1
    while [[ $_gs_i -lt $COMP_CWORD && "${COMP_WORDS[_gs_i]}" != session ]]; do
        _gs_i=$((_gs_i + 1))
    done
    local _gs_words=("git-session" "${COMP_WORDS[@]:_gs_i+1}")
    local _gs_cword=$((COMP_CWORD - _gs_i))
    local COMP_WORDS COMP_CWORD
    COMP_WORDS=("${_gs_words[@]}")
    COMP_CWORD=$_gs_cword
    _git__session git-session "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

/// The completion script for one shell.
pub fn script(shell: Shell) -> Result<String> {
    let mut cmd = crate::cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN_NAME, &mut buf);
    let mut text = String::from_utf8(buf).context("the generated completion script")?;
    if shell == Shell::Bash {
        text = repair_bash_state_names(&text);
        text.push_str(BASH_GIT_BRIDGE);
    }
    Ok(text)
}

/// clap_complete spells the bash state of a subcommand two ways when the bin name has a hyphen
/// (clap-rs/clap#6421): the dispatch loop sets `git__session__subcmd__handoff`, the case arms
/// test `git__subcmd__session__subcmd__handoff`, so nothing past the first word would complete.
/// Spell the arms the way the loop does; once upstream is fixed this finds nothing to change.
fn repair_bash_state_names(text: &str) -> String {
    text.replace("git__subcmd__session", "git__session")
}

pub fn run(args: Args) -> Result<()> {
    let text = script(args.shell)?;
    // Through `output` so that `git session completions bash | head` exits quietly.
    output::line(text.strip_suffix('\n').unwrap_or(&text))?;
    Ok(())
}
