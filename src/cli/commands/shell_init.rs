//! `git session shell-init bash|zsh|fish`: a shell function that lets git-session move the shell.
//!
//! A child process cannot change its parent shell's directory, so the function printed here
//! wraps both spellings (`git session ...` through a `git` function that passes everything else
//! to the real git untouched, and `git-session ...`): it hands the binary a fresh file in
//! `GIT_SESSION_CD_FILE`, runs it, and afterwards `cd`s to the one directory the binary wrote
//! there, if any, exporting the `GIT_SESSION_<NAME>=<value>` lines written before it (a
//! session's leased resources). The binary writes it only through
//! [`crate::cli::shell::request_cd`]: `create`
//! asks for the new worktree, `switch` for the session's worktree, `cleanup` (also run by `merge`)
//! of the worktree the shell stands in for the main worktree.
//!
//! Invariants: without the variable nothing is written and output is unchanged (scripts keep
//! `cd "$(git session create x)"`); the wrapper passes the command's exit status through, and
//! never changes directory after a failed command.

use crate::cli::output;
use anyhow::Result;

/// Print the shell integration for bash, zsh or fish (eval it in your shell's rc file)
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Add to ~/.bashrc:   eval \"$(git session shell-init bash)\"\n\
                        Add to ~/.zshrc:    eval \"$(git session shell-init zsh)\"\n\
                        Add to ~/.config/fish/config.fish:   git session shell-init fish | source"
)]
pub struct Args {
    /// The shell to print the integration for
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

const POSIX: &str = r#"# git-session shell integration: `git session create` and `git session switch` enter the
# session's worktree (and export its GIT_SESSION_PORT, ... when it has [resources]);
# `git session cleanup` or `merge` of the worktree you stand in returns you to the main worktree.
__git_session_run() {
    local __gs_file __gs_status __gs_dir __gs_env __gs_kv __gs_nl='
'
    __gs_file=$(mktemp "${TMPDIR:-/tmp}/git-session-cd.XXXXXX") || { command "$@"; return; }
    GIT_SESSION_CD_FILE="$__gs_file" command "$@"
    __gs_status=$?
    __gs_dir=$(cat "$__gs_file" 2>/dev/null)
    rm -f "$__gs_file"
    # Lines GIT_SESSION_<NAME>=<value> come first; the directory (absolute) is the rest.
    __gs_env=
    while :; do
        case "$__gs_dir" in
            GIT_SESSION_*"$__gs_nl"*)
                __gs_env="$__gs_env${__gs_dir%%"$__gs_nl"*}$__gs_nl"
                __gs_dir=${__gs_dir#*"$__gs_nl"} ;;
            *) break ;;
        esac
    done
    if [ "$__gs_status" -eq 0 ] && [ -n "$__gs_dir" ] && [ -d "$__gs_dir" ]; then
        cd "$__gs_dir" || return
        while [ -n "$__gs_env" ]; do
            __gs_kv=${__gs_env%%"$__gs_nl"*}
            __gs_env=${__gs_env#*"$__gs_nl"}
            export "$__gs_kv"
        done
    fi
    return "$__gs_status"
}
git-session() { __git_session_run git-session "$@"; }
git() {
    if [ "$1" = session ] && [ "$2" = --help ] && [ "$#" -eq 2 ]; then
        # git turns it into `man git-session`: where man has no page, the binary shows its own.
        command git -c man.viewer=git-session -c "man.git-session.cmd=git-session __man" "$@"
    elif [ "$1" = session ]; then
        __git_session_run git "$@"
    else
        command git "$@"
    fi
}
"#;

const FISH: &str = r#"# git-session shell integration: `git session create` and `git session switch` enter the
# session's worktree (and export its GIT_SESSION_PORT, ... when it has [resources]);
# `git session cleanup` or `merge` of the worktree you stand in returns you to the main worktree.
function __git_session_run
    set -l file (mktemp (string join '' (set -q TMPDIR; and echo $TMPDIR; or echo /tmp) /git-session-cd.XXXXXX))
    or begin; command $argv; return $status; end
    GIT_SESSION_CD_FILE=$file command $argv
    set -l code $status
    set -l dir
    set -l vars
    for line in (cat $file 2>/dev/null)
        if string match -qr '^GIT_SESSION_[A-Z0-9_]+=' -- $line
            set -a vars $line
        else
            set -a dir $line
        end
    end
    rm -f $file
    if test $code -eq 0; and test -n "$dir"; and test -d "$dir"
        cd $dir
        for kv in $vars
            set -l parts (string split -m 1 = -- $kv)
            set -gx $parts[1] $parts[2]
        end
    end
    return $code
end
function git-session --wraps git-session
    __git_session_run git-session $argv
end
function git --wraps git
    if test (count $argv) -eq 2; and test "$argv[1]" = session; and test "$argv[2]" = --help
        # git turns it into `man git-session`: where man has no page, the binary shows its own.
        command git -c man.viewer=git-session -c "man.git-session.cmd=git-session __man" $argv
    else if test (count $argv) -gt 0; and test "$argv[1]" = session
        __git_session_run git $argv
    else
        command git $argv
    end
end
"#;

pub fn script(shell: Shell) -> &'static str {
    match shell {
        Shell::Bash | Shell::Zsh => POSIX,
        Shell::Fish => FISH,
    }
}

pub fn run(args: Args) -> Result<()> {
    output::line(script(args.shell).trim_end())?;
    Ok(())
}
