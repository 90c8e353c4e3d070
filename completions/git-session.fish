# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_git_session_global_optspecs
    string join \n h/help V/version
end

function __fish_git_session_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_git_session_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_git_session_using_subcommand
    set -l cmd (__fish_git_session_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c git-session -n "__fish_git_session_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_needs_command" -s V -l version -d 'Print version'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "create" -d 'Create a session: a worktree on a new branch session/<LABEL>; prints its path'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "list" -d 'List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "info" -d 'Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "switch" -d 'Print the worktree path of a session (the shell integration enters it)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "env" -d 'Print a session\'s ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "merge" -d 'Integrate sessions into their base branch, then remove them (as cleanup does)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "cleanup" -d 'Remove sessions: worktree, branch and state (refuses while work would be lost)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "setup" -d 'Run the worktree setup ([create] copy and run) in an existing session'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "prune" -d 'Remove merged, clean sessions inactive longer than an age (for cron; never prompts)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "restore" -d 'Give a removed session back from its archive (worktree, branch, files and record)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "claim" -d 'Claim paths for the current session (first claim wins; a directory covers what is below it)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "release" -d 'Release the current session\'s claims on paths (or all of them)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "claims" -d 'List path claims: path, session, how, since, and whether the claim is in force (live)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "sync" -d 'Share claims through the remote: fetch others\', renew and publish this clone\'s, report lost'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "guard" -d 'Run the ownership checks the git hooks call (installed by `git session hooks install`)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "hooks" -d 'Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "context" -d 'The context-threshold hook and its companions'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "handoff" -d 'Versioned kickoff notes per session; the latest is injected into the next agent session'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "man" -d 'Write man pages for git-session and each of its subcommands into a directory'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "shell-init" -d 'Print the shell integration for bash, zsh or fish (eval it in your shell\'s rc file)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "worktree-hook" -d 'Claude Code\'s WorktreeCreate/WorktreeRemove hooks (installed by `context install`)'
complete -c git-session -n "__fish_git_session_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand create" -l base -d 'Revision to start from [default: the repository\'s main branch, or `base` in config]' -r
complete -c git-session -n "__fish_git_session_using_subcommand create" -l path -d 'Worktree directory [default: <worktrees_dir>/<LABEL>]' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand create" -l timeout -d 'Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]' -r
complete -c git-session -n "__fish_git_session_using_subcommand create" -l attach -d 'Register a session in the current worktree instead of creating one'
complete -c git-session -n "__fish_git_session_using_subcommand create" -l approve-run -d 'Approve the repository\'s `[create] run` commands (asked once on a terminal otherwise)'
complete -c git-session -n "__fish_git_session_using_subcommand create" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l sort -d 'Order of the sessions: by label, or the agents that need you first (waiting for a permission, then for input, the longest wait first; then gone, quiet, working, ended) [default: `[list] sort` of the configuration, else label]' -r -f -a "label\t''
attention\t''"
complete -c git-session -n "__fish_git_session_using_subcommand list" -l json -d 'Print a JSON array (stable keys; see docs/json.md)'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l wide -d 'Every column and full paths, even on a narrow terminal'
complete -c git-session -n "__fish_git_session_using_subcommand list" -l watch -d 'Redraw in place on a terminal whenever a session or an agent changes (plain output, once per change, elsewhere); q or Ctrl-C ends it'
complete -c git-session -n "__fish_git_session_using_subcommand list" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand info" -l json -d 'Print one JSON object (stable keys; see docs/json.md)'
complete -c git-session -n "__fish_git_session_using_subcommand info" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand switch" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand env" -l format -d '`sh`: `export K=\'V\'` lines for eval; `dotenv`: `K=V` lines' -r -f -a "sh\t''
dotenv\t''"
complete -c git-session -n "__fish_git_session_using_subcommand env" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -l all -d 'Every session ready to merge (committed, clean, nobody inside), oldest first'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -l keep -d 'Keep the sessions (worktree and branch) after merging; their claims still end'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -l no-check -d 'Skip the `[merge] check` commands (recorded in the audit log)'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -l approve-check -d 'Approve the `[merge] check` commands of the repository\'s .git-session.toml'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -l dry-run -d 'Compute (and check) every merge, move nothing'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -l json -d 'One JSON object per session on stdout'
complete -c git-session -n "__fish_git_session_using_subcommand merge" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand cleanup" -l force -d 'Remove even with unmerged commits, uncommitted files or processes inside, after writing an archive ref that holds all of it'
complete -c git-session -n "__fish_git_session_using_subcommand cleanup" -s y -l yes -d 'Do not ask for confirmation (with --force on a terminal)'
complete -c git-session -n "__fish_git_session_using_subcommand cleanup" -s n -l dry-run -d 'Say what would be removed, remove nothing'
complete -c git-session -n "__fish_git_session_using_subcommand cleanup" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand setup" -l timeout -d 'Deadline for each command, such as 30s or 5m [default: create_timeout, 300s]' -r
complete -c git-session -n "__fish_git_session_using_subcommand setup" -l approve-run -d 'Approve the repository\'s `[create] run` commands (asked once on a terminal otherwise)'
complete -c git-session -n "__fish_git_session_using_subcommand setup" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand prune" -l older-than -d 'Inactivity after which a merged, clean session is removed [default: stale_after, 7d]' -r
complete -c git-session -n "__fish_git_session_using_subcommand prune" -s n -l dry-run -d 'Say what would be removed, remove nothing'
complete -c git-session -n "__fish_git_session_using_subcommand prune" -s q -l quiet -d 'Print nothing but errors'
complete -c git-session -n "__fish_git_session_using_subcommand prune" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand restore" -l timeout -d 'Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]' -r
complete -c git-session -n "__fish_git_session_using_subcommand restore" -l approve-run -d 'Approve the repository\'s `[create] run` commands (asked once on a terminal otherwise)'
complete -c git-session -n "__fish_git_session_using_subcommand restore" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand claim" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand release" -l all -d 'Release every claim of the session'
complete -c git-session -n "__fish_git_session_using_subcommand release" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand claims" -l json -d 'Print a JSON array of {path, label, how, since, live} (claims of other clones, with [claims] remote: how "elsewhere", and host, clone, expires)'
complete -c git-session -n "__fish_git_session_using_subcommand claims" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand sync" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and not __fish_seen_subcommand_from pre-commit post-commit pre-push help" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and not __fish_seen_subcommand_from pre-commit post-commit pre-push help" -f -a "pre-commit" -d 'Refuse a commit whose staged paths another live session owns (exit 1)'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and not __fish_seen_subcommand_from pre-commit post-commit pre-push help" -f -a "post-commit" -d 'Check a commit the pre-commit never saw (--no-verify); warns, never fails'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and not __fish_seen_subcommand_from pre-commit post-commit pre-push help" -f -a "pre-push" -d 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git\'s pre-push lines on stdin)'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and not __fish_seen_subcommand_from pre-commit post-commit pre-push help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from pre-commit" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from post-commit" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from pre-push" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "pre-commit" -d 'Refuse a commit whose staged paths another live session owns (exit 1)'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "post-commit" -d 'Check a commit the pre-commit never saw (--no-verify); warns, never fails'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "pre-push" -d 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git\'s pre-push lines on stdin)'
complete -c git-session -n "__fish_git_session_using_subcommand guard; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "install" -d 'Install the guard where commits made here look for hooks: git\'s config-based hooks (git 2.54+), else a hook manager\'s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "uninstall" -d 'Remove exactly what install added, and put back any hook it had moved aside'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "status" -d 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and not __fish_seen_subcommand_from install uninstall status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from status" -l json -d 'Print JSON'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "install" -d 'Install the guard where commits made here look for hooks: git\'s config-based hooks (git 2.54+), else a hook manager\'s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove exactly what install added, and put back any hook it had moved aside'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)'
complete -c git-session -n "__fish_git_session_using_subcommand hooks; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand context; and not __fish_seen_subcommand_from hook status wrapped-up install help" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand context; and not __fish_seen_subcommand_from hook status wrapped-up install help" -f -a "hook" -d 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini\'s AfterTool, BeforeTool, BeforeAgent); always exits 0'
complete -c git-session -n "__fish_git_session_using_subcommand context; and not __fish_seen_subcommand_from hook status wrapped-up install help" -f -a "status" -d 'Context fill, window and its source, thresholds fired, wrap-up, compactions'
complete -c git-session -n "__fish_git_session_using_subcommand context; and not __fish_seen_subcommand_from hook status wrapped-up install help" -f -a "wrapped-up" -d 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction'
complete -c git-session -n "__fish_git_session_using_subcommand context; and not __fish_seen_subcommand_from hook status wrapped-up install help" -f -a "install" -d 'Merge the hook configuration into .claude/settings.json (or the user\'s settings)'
complete -c git-session -n "__fish_git_session_using_subcommand context; and not __fish_seen_subcommand_from hook status wrapped-up install help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from hook" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from status" -l agent-session -d 'The agent session to show [default: the most recently active one linked to the current session]' -r
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from status" -l transcript -d 'Any transcript file (Claude Code .jsonl or Codex rollout)' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from status" -l json -d 'Print one JSON object (stable keys; see docs/json.md)'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from status" -l stdin -d 'Read a hook or statusline JSON payload from stdin (its context_window numbers win and are remembered); always exits 0, printing an "unknown" form when nothing is known'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from status" -l short -d 'One short line for a statusline: label and fill of the compaction point, and how many other sessions wait for a permission or input'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from wrapped-up" -l scope -d 'How much of the wrap-up was done' -r -f -a "essential\t'Tier 1 only: commit, memory and status, kickoff note; the rest deferred'
full\t'The whole wrap-up'"
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from wrapped-up" -l agent-session -d 'The agent session [default: the most recently active one linked to the current session]' -r
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from wrapped-up" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -l agent -d 'The agent whose hook file to install into: Claude Code\'s .claude/settings.json, Codex\'s .codex/hooks.json, Gemini CLI\'s .gemini/settings.json, GitHub Copilot CLI\'s .github/hooks/git-session.json' -r -f -a "claude\t''
codex\t''
gemini\t''
copilot\t''"
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -l user -d 'Install into the user\'s ~/.claude/settings.json instead of the project\'s'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -l local -d 'Install into the project\'s git-ignored .claude/settings.local.json (this machine only)'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -l codex -d 'Same as --agent codex'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -l gemini -d 'Same as --agent gemini'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -l dry-run -d 'Print the resulting settings file and change nothing'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "hook" -d 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini\'s AfterTool, BeforeTool, BeforeAgent); always exits 0'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "status" -d 'Context fill, window and its source, thresholds fired, wrap-up, compactions'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "wrapped-up" -d 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "install" -d 'Merge the hook configuration into .claude/settings.json (or the user\'s settings)'
complete -c git-session -n "__fish_git_session_using_subcommand context; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and not __fish_seen_subcommand_from write show list template help" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and not __fish_seen_subcommand_from write show list template help" -f -a "write" -d 'Store a new version of a session\'s kickoff note, read from a file or stdin'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and not __fish_seen_subcommand_from write show list template help" -f -a "show" -d 'Print a session\'s latest kickoff note (or an older version)'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and not __fish_seen_subcommand_from write show list template help" -f -a "list" -d 'List the stored versions of kickoff notes: time and first line'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and not __fish_seen_subcommand_from write show list template help" -f -a "template" -d 'Print a kickoff-note template to fill in'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and not __fish_seen_subcommand_from write show list template help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from write" -s s -l session -d 'Session the note is for [default: GIT_SESSION, or the session of the current worktree]' -r -f -a "(__fish_git_session_labels)"
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from write" -s F -l file -d 'Read the note from FILE ("-" for stdin)' -r -F
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from write" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from show" -l version -d 'Print version N instead of the latest' -r
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from list" -l all -d 'List the notes of every session'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from list" -l json -d 'Print a JSON array of {label, version, at, title, path}'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from template" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from help" -f -a "write" -d 'Store a new version of a session\'s kickoff note, read from a file or stdin'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from help" -f -a "show" -d 'Print a session\'s latest kickoff note (or an older version)'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from help" -f -a "list" -d 'List the stored versions of kickoff notes: time and first line'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from help" -f -a "template" -d 'Print a kickoff-note template to fill in'
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand completions" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand man" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand shell-init" -s h -l help -d 'Print help'
complete -c git-session -n "__fish_git_session_using_subcommand worktree-hook" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "create" -d 'Create a session: a worktree on a new branch session/<LABEL>; prints its path'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "list" -d 'List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "info" -d 'Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "switch" -d 'Print the worktree path of a session (the shell integration enters it)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "env" -d 'Print a session\'s ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "merge" -d 'Integrate sessions into their base branch, then remove them (as cleanup does)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "cleanup" -d 'Remove sessions: worktree, branch and state (refuses while work would be lost)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "setup" -d 'Run the worktree setup ([create] copy and run) in an existing session'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "prune" -d 'Remove merged, clean sessions inactive longer than an age (for cron; never prompts)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "restore" -d 'Give a removed session back from its archive (worktree, branch, files and record)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "claim" -d 'Claim paths for the current session (first claim wins; a directory covers what is below it)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "release" -d 'Release the current session\'s claims on paths (or all of them)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "claims" -d 'List path claims: path, session, how, since, and whether the claim is in force (live)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "sync" -d 'Share claims through the remote: fetch others\', renew and publish this clone\'s, report lost'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "guard" -d 'Run the ownership checks the git hooks call (installed by `git session hooks install`)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "hooks" -d 'Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "context" -d 'The context-threshold hook and its companions'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "handoff" -d 'Versioned kickoff notes per session; the latest is injected into the next agent session'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "completions" -d 'Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "man" -d 'Write man pages for git-session and each of its subcommands into a directory'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "shell-init" -d 'Print the shell integration for bash, zsh or fish (eval it in your shell\'s rc file)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "worktree-hook" -d 'Claude Code\'s WorktreeCreate/WorktreeRemove hooks (installed by `context install`)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and not __fish_seen_subcommand_from create list info switch env merge cleanup setup prune restore claim release claims sync guard hooks context handoff completions man shell-init worktree-hook help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "pre-commit" -d 'Refuse a commit whose staged paths another live session owns (exit 1)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "post-commit" -d 'Check a commit the pre-commit never saw (--no-verify); warns, never fails'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from guard" -f -a "pre-push" -d 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git\'s pre-push lines on stdin)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "install" -d 'Install the guard where commits made here look for hooks: git\'s config-based hooks (git 2.54+), else a hook manager\'s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "uninstall" -d 'Remove exactly what install added, and put back any hook it had moved aside'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from hooks" -f -a "status" -d 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from context" -f -a "hook" -d 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini\'s AfterTool, BeforeTool, BeforeAgent); always exits 0'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from context" -f -a "status" -d 'Context fill, window and its source, thresholds fired, wrap-up, compactions'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from context" -f -a "wrapped-up" -d 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from context" -f -a "install" -d 'Merge the hook configuration into .claude/settings.json (or the user\'s settings)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from handoff" -f -a "write" -d 'Store a new version of a session\'s kickoff note, read from a file or stdin'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from handoff" -f -a "show" -d 'Print a session\'s latest kickoff note (or an older version)'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from handoff" -f -a "list" -d 'List the stored versions of kickoff notes: time and first line'
complete -c git-session -n "__fish_git_session_using_subcommand help; and __fish_seen_subcommand_from handoff" -f -a "template" -d 'Print a kickoff-note template to fill in'

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
complete -c git-session -n "__fish_git_session_using_subcommand info" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand switch" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand env" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand merge" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand cleanup" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand setup" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand restore" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from show" -f -a "(__fish_git_session_labels_here)"
complete -c git-session -n "__fish_git_session_using_subcommand handoff; and __fish_seen_subcommand_from list" -f -a "(__fish_git_session_labels_here)"

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
