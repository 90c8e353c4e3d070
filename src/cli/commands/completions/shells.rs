//! What each shell's script gets beyond clap_complete's output: session labels, and the bridges
//! from `git session ...` to the `git-session` completion.
//!
//! Labels (see [`super::labels`]):
//! - bash: clap's bash function knows nothing of positional arguments, so a wrapper asks the
//!   binary with the words typed whether the current one is a label; if so it offers the labels
//!   it printed (and no files), else it hands over to the generated function.
//! - zsh and fish: the label-taking arguments are marked in a copy of the command tree with a
//!   value hint no real argument of git-session uses ([`MARKER`], `Username`), which clap turns
//!   into `_users` (zsh) and `__fish_complete_users` (fish); those are replaced by functions
//!   listing the labels. clap's fish output leaves positional arguments out, so lines for them
//!   are added, gated on the subcommand and asking the binary whether a label still goes there.
//!
//! Bridges:
//! - bash: git's completion calls `_git_session` for `git session ...` (see `BASH_GIT_BRIDGE`).
//! - zsh: `_git` calls `_git-session` itself, with the words starting at `session`.
//! - fish: fish 3.6's git completion registers external `git-*` commands under their file name
//!   (`git-session`), which never matches the word `session`, and so never reaches
//!   git-session's completions; later versions hand `git NAME ...` to `git-NAME`'s completions
//!   themselves. The fish script therefore completes `git [options] session ...` as
//!   `git-session ...` (`FISH_GIT_BRIDGE`); where fish does both, it drops duplicate candidates.
//!
//! Invariant: every addition is fixed text or derived from the command tree, so the scripts stay
//! byte for byte reproducible.

use super::labels::{self, LabelArg};
use clap::{Command, ValueHint};

/// The value hint that marks label-taking arguments in the copy of the tree given to the zsh
/// and fish generators.
pub const MARKER: ValueHint = ValueHint::Username;

/// The tree with every label-taking argument marked with [`MARKER`] (in place: clap's
/// `mut_arg`/`mut_subcommand` would move what they change to the end, reordering the menus).
pub fn mark_labels(cmd: Command) -> Command {
    mark(cmd, &mut Vec::new())
}

fn mark(cmd: Command, path: &mut Vec<String>) -> Command {
    let here = path.clone();
    cmd.mut_args(|a| {
        if labels::takes_label(&here, &a) {
            a.value_hint(MARKER)
        } else {
            a
        }
    })
    .mut_subcommands(|sub| {
        path.push(sub.get_name().to_string());
        let sub = mark(sub, path);
        path.pop();
        sub
    })
}

/// Lets `git session <TAB>` use the generated bash function (see the module doc).
const BASH_GIT_BRIDGE: &str = r#"
# `git session <TAB>`: git's bash completion calls `_git_session` for the `session` subcommand
# (loading this file by the name git-session through bash-completion when needed). Rewrite the
# words from `git [global options] session ...` to `git-session ...` and complete those.
_git_session() {
    local _gs_i=1 _gs_C=() _gs_d
    while [[ $_gs_i -lt $COMP_CWORD && "${COMP_WORDS[_gs_i]}" != session ]]; do
        # `git -C DIR session ...` runs in DIR: so do the labels.
        if [[ ${COMP_WORDS[_gs_i]} == -C && $((_gs_i + 1)) -lt $COMP_CWORD ]]; then
            _gs_i=$((_gs_i + 1))
            _gs_d=${COMP_WORDS[_gs_i]}
            # As typed: one pair of quotes or backslash escapes removed.
            if [[ $_gs_d == \'*\' || $_gs_d == \"*\" ]]; then
                _gs_d=${_gs_d:1:${#_gs_d}-2}
            else
                _gs_d=${_gs_d//\\/}
            fi
            _gs_C+=(-C "$_gs_d")
        fi
        _gs_i=$((_gs_i + 1))
    done
    local _gs_words=("git-session" "${COMP_WORDS[@]:_gs_i+1}")
    local _gs_cword=$((COMP_CWORD - _gs_i))
    local COMP_WORDS COMP_CWORD
    COMP_WORDS=("${_gs_words[@]}")
    COMP_CWORD=$_gs_cword
    _git_session_complete git-session "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

/// Offers session labels where the binary says one goes, else what the generated function does.
const BASH_LABELS: &str = r#"
# Session labels: `git-session __complete-labels -- WORDS...` prints the labels of the
# repository's sessions and succeeds only when the last word stands where a label goes.
_git_session_complete() {
    local _gs_cur=${COMP_WORDS[COMP_CWORD]} _gs_labels
    # bash splits `--session=x` into `--session`, `=`, `x`.
    [[ $_gs_cur == = ]] && _gs_cur=
    if [[ $COMP_CWORD -ge 2 && $_gs_cur != -* ]] &&
        _gs_labels=$(command git-session __complete-labels ${_gs_C[@]+"${_gs_C[@]}"} -- \
            "${COMP_WORDS[@]:0:COMP_CWORD}" "$_gs_cur" 2>/dev/null); then
        COMPREPLY=($(compgen -W "$_gs_labels" -- "$_gs_cur"))
        # A label, never a file name, goes here.
        compopt +o default +o bashdefault 2>/dev/null
        return 0
    fi
    _git__session "$@"
}
"#;

/// The bash script: clap's, repaired, registered through the label wrapper, plus the git bridge.
pub fn bash(generated: &str) -> String {
    // clap_complete spells the bash state of a subcommand two ways when the bin name has a
    // hyphen (clap-rs/clap#6421): the dispatch loop sets `git__session__subcmd__handoff`, the
    // case arms test `git__subcmd__session__subcmd__handoff`, so nothing past the first word
    // would complete. Spell the arms the way the loop does; once upstream is fixed this finds
    // nothing to change.
    let mut text = generated
        .replace("git__subcmd__session", "git__session")
        .replace(
            "complete -F _git__session ",
            "complete -F _git_session_complete ",
        );
    text.push_str(BASH_LABELS);
    text.push_str(BASH_GIT_BRIDGE);
    text
}

/// Lists the labels for zsh's `_arguments`.
const ZSH_LABELS: &str = r#"(( $+functions[_git-session_labels] )) ||
_git-session_labels() {
    local -a _gs_labels expl
    local -a _gs_C
    # `git -C DIR session ...` runs in DIR: so do the labels (see `_git-session`).
    [[ -n ${_gs_git_C-} ]] && _gs_C=(-C ${(Q)${~_gs_git_C}})
    _gs_labels=(${(f)"$(command git-session __complete-labels $_gs_C 2>/dev/null)"})
    _wanted session-labels expl 'session label' compadd -a _gs_labels
}

"#;

/// The zsh script: the marked arguments complete labels.
pub fn zsh(generated: &str) -> String {
    // Called by git's completion for `git [-C DIR] session ...`, the function first sees git's
    // `opt_args` (DIR under `-C`), then declares its own for `_arguments`: keep DIR before that.
    let text = generated
        .replace(":_users'", ":_git-session_labels'")
        .replacen(
            "_git-session() {\n    typeset -A opt_args\n",
            "_git-session() {\n    local _gs_git_C\n    \
         [[ ${(t)opt_args} == association* ]] && _gs_git_C=${opt_args[-C]-}\n    \
         typeset -A opt_args\n",
            1,
        );
    // The functions must exist before the file's last lines call `_git-session`.
    let tail = "if [ \"$funcstack[1]\" = \"_git-session\" ]; then";
    match text.rfind(tail) {
        Some(at) => format!("{}{ZSH_LABELS}{}", &text[..at], &text[at..]),
        None => format!("{text}\n{ZSH_LABELS}"),
    }
}

const FISH_LABELS: &str = r#"
# Session labels, read from the repository's store at TAB time.
function __fish_git_session_labels
    command git-session __complete-labels $__fish_git_session_C 2>/dev/null
end

# The labels, only when the word being completed stands where one goes (so a label already
# given to `info` is not offered again).
function __fish_git_session_labels_here
    set -l cur (commandline -ct)
    command git-session __complete-labels $__fish_git_session_C -- (commandline -opc) "$cur" 2>/dev/null
end
"#;

/// Completes `git [git options] session ...` as `git-session ...` (see the module doc).
const FISH_GIT_BRIDGE: &str = r#"
# `git session ...`: the words after `session`, when the git subcommand is `session`.
function __fish_git_session_git_args
    set -l words (commandline -opc)
    set -e words[1]
    set -g __fish_git_session_C
    while set -q words[1]
        switch $words[1]
            case -C
                # `git -C DIR session ...` runs in DIR: so do the labels.
                set -ga __fish_git_session_C -C $words[2]
                set words $words[3..-1]
            case -c --git-dir --work-tree --namespace --config-env --super-prefix
                set words $words[3..-1]
            case '-*'
                set -e words[1]
            case '*'
                break
        end
    end
    if test "$words[1]" != session
        set -e __fish_git_session_C
        return 1
    end
    # `string escape` of nothing fails, but `git session <TAB>` is a match.
    string escape -- $words[2..-1]
    return 0
end

function __fish_git_session_from_git
    set -l args (__fish_git_session_git_args)
    or return
    set -l cur (commandline -ct)
    complete -C (string join ' ' -- git-session $args "$cur")
    set -e __fish_git_session_C
end

complete -c git -f -n '__fish_git_session_git_args >/dev/null' -a '(__fish_git_session_from_git)'
"#;

/// The fish script: labels for the marked options and for positional arguments, and the git
/// bridge.
pub fn fish(generated: &str, args: &[LabelArg]) -> String {
    let mut text = generated.replace(
        "-a \"(__fish_complete_users)\"",
        "-a \"(__fish_git_session_labels)\"",
    );
    text.push_str(FISH_LABELS);
    for arg in args.iter().filter(|a| a.positional) {
        text.push_str(&format!(
            "complete -c {} -n \"{}\" -f -a \"(__fish_git_session_labels_here)\"\n",
            super::BIN_NAME,
            fish_condition(&arg.path)
        ));
    }
    text.push_str(FISH_GIT_BRIDGE);
    text
}

/// The condition clap's fish script uses for a subcommand path (one or two levels).
fn fish_condition(path: &[String]) -> String {
    let using = "__fish_git_session_using_subcommand";
    match path {
        [] => "__fish_git_session_needs_command".to_string(),
        [one] => format!("{using} {one}"),
        [one, two] => format!("{using} {one}; and __fish_seen_subcommand_from {two}"),
        // Deeper trees: clap's fish generator stops at two levels as well.
        _ => format!("{using} {}", path.join(" ")),
    }
}
