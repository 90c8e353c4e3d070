
use builtin;
use str;

set edit:completion:arg-completer[git-session] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'git-session'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'git-session'= {
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Create a session: a worktree on a new branch session/<LABEL>; prints its path'
            cand list 'List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context'
            cand info 'Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives'
            cand switch 'Print the worktree path of a session (the shell integration enters it)'
            cand env 'Print a session''s ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env'
            cand merge 'Integrate sessions into their base branch, then remove them (as cleanup does)'
            cand cleanup 'Remove sessions: worktree, branch and state (refuses while work would be lost)'
            cand setup 'Run the worktree setup ([create] copy and run) in an existing session'
            cand prune 'Remove merged, clean sessions inactive longer than an age (for cron; never prompts)'
            cand restore 'Give a removed session back from its archive (worktree, branch, files and record)'
            cand claim 'Claim paths for the current session (first claim wins; a directory covers what is below it)'
            cand release 'Release the current session''s claims on paths (or all of them)'
            cand claims 'List path claims: path, session, how, since, and whether the claim is in force (live)'
            cand sync 'Share claims through the remote: fetch others'', renew and publish this clone''s, report lost'
            cand guard 'Run the ownership checks the git hooks call (installed by `git session hooks install`)'
            cand hooks 'Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard'
            cand context 'The context-threshold hook and its companions'
            cand handoff 'Versioned kickoff notes per session; the latest is injected into the next agent session'
            cand completions 'Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout'
            cand man 'Write man pages for git-session and each of its subcommands into a directory'
            cand shell-init 'Print the shell integration for bash, zsh or fish (eval it in your shell''s rc file)'
            cand worktree-hook 'Claude Code''s WorktreeCreate/WorktreeRemove hooks (installed by `context install`)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;create'= {
            cand --base 'Revision to start from [default: the repository''s main branch, or `base` in config]'
            cand --path 'Worktree directory [default: <worktrees_dir>/<LABEL>]'
            cand --timeout 'Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]'
            cand --attach 'Register a session in the current worktree instead of creating one'
            cand --approve-run 'Approve the repository''s `[create] run` commands (asked once on a terminal otherwise)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;list'= {
            cand --sort 'Order of the sessions: by label, or the agents that need you first (waiting for a permission, then for input, the longest wait first; then gone, quiet, working, ended) [default: `[list] sort` of the configuration, else label]'
            cand --json 'Print a JSON array (stable keys; see docs/json.md)'
            cand --wide 'Every column and full paths, even on a narrow terminal'
            cand --watch 'Redraw in place on a terminal whenever a session or an agent changes (plain output, once per change, elsewhere); q or Ctrl-C ends it'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;info'= {
            cand --json 'Print one JSON object (stable keys; see docs/json.md)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;switch'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;env'= {
            cand --format '`sh`: `export K=''V''` lines for eval; `dotenv`: `K=V` lines'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;merge'= {
            cand --all 'Every session ready to merge (committed, clean, nobody inside), oldest first'
            cand --keep 'Keep the sessions (worktree and branch) after merging; their claims still end'
            cand --no-check 'Skip the `[merge] check` commands (recorded in the audit log)'
            cand --approve-check 'Approve the `[merge] check` commands of the repository''s .git-session.toml'
            cand --dry-run 'Compute (and check) every merge, move nothing'
            cand --json 'One JSON object per session on stdout'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;cleanup'= {
            cand --force 'Remove even with unmerged commits, uncommitted files or processes inside, after writing an archive ref that holds all of it'
            cand -y 'Do not ask for confirmation (with --force on a terminal)'
            cand --yes 'Do not ask for confirmation (with --force on a terminal)'
            cand -n 'Say what would be removed, remove nothing'
            cand --dry-run 'Say what would be removed, remove nothing'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;setup'= {
            cand --timeout 'Deadline for each command, such as 30s or 5m [default: create_timeout, 300s]'
            cand --approve-run 'Approve the repository''s `[create] run` commands (asked once on a terminal otherwise)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;prune'= {
            cand --older-than 'Inactivity after which a merged, clean session is removed [default: stale_after, 7d]'
            cand -n 'Say what would be removed, remove nothing'
            cand --dry-run 'Say what would be removed, remove nothing'
            cand -q 'Print nothing but errors'
            cand --quiet 'Print nothing but errors'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;restore'= {
            cand --timeout 'Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]'
            cand --approve-run 'Approve the repository''s `[create] run` commands (asked once on a terminal otherwise)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;claim'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;release'= {
            cand --all 'Release every claim of the session'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;claims'= {
            cand --json 'Print a JSON array of {path, label, how, since, live} (claims of other clones, with [claims] remote: how "elsewhere", and host, clone, expires)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;sync'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;guard'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand pre-commit 'Refuse a commit whose staged paths another live session owns (exit 1)'
            cand post-commit 'Check a commit the pre-commit never saw (--no-verify); warns, never fails'
            cand pre-push 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git''s pre-push lines on stdin)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;guard;pre-commit'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;guard;post-commit'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;guard;pre-push'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;guard;help'= {
            cand pre-commit 'Refuse a commit whose staged paths another live session owns (exit 1)'
            cand post-commit 'Check a commit the pre-commit never saw (--no-verify); warns, never fails'
            cand pre-push 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git''s pre-push lines on stdin)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;guard;help;pre-commit'= {
        }
        &'git-session;guard;help;post-commit'= {
        }
        &'git-session;guard;help;pre-push'= {
        }
        &'git-session;guard;help;help'= {
        }
        &'git-session;hooks'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand install 'Install the guard where commits made here look for hooks: git''s config-based hooks (git 2.54+), else a hook manager''s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running'
            cand uninstall 'Remove exactly what install added, and put back any hook it had moved aside'
            cand status 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;hooks;install'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;hooks;uninstall'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;hooks;status'= {
            cand --json 'Print JSON'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;hooks;help'= {
            cand install 'Install the guard where commits made here look for hooks: git''s config-based hooks (git 2.54+), else a hook manager''s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running'
            cand uninstall 'Remove exactly what install added, and put back any hook it had moved aside'
            cand status 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;hooks;help;install'= {
        }
        &'git-session;hooks;help;uninstall'= {
        }
        &'git-session;hooks;help;status'= {
        }
        &'git-session;hooks;help;help'= {
        }
        &'git-session;context'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand hook 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini''s AfterTool, BeforeTool, BeforeAgent); always exits 0'
            cand status 'Context fill, window and its source, thresholds fired, wrap-up, compactions'
            cand wrapped-up 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction'
            cand install 'Merge the hook configuration into .claude/settings.json (or the user''s settings)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;context;hook'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;context;status'= {
            cand --agent-session 'The agent session to show [default: the most recently active one linked to the current session]'
            cand --transcript 'Any transcript file (Claude Code .jsonl or Codex rollout)'
            cand --json 'Print one JSON object (stable keys; see docs/json.md)'
            cand --stdin 'Read a hook or statusline JSON payload from stdin (its context_window numbers win and are remembered); always exits 0, printing an "unknown" form when nothing is known'
            cand --short 'One short line for a statusline: label and fill of the compaction point, and how many other sessions wait for a permission or input'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;context;wrapped-up'= {
            cand --scope 'How much of the wrap-up was done'
            cand --agent-session 'The agent session [default: the most recently active one linked to the current session]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'git-session;context;install'= {
            cand --agent 'The agent whose hook file to install into: Claude Code''s .claude/settings.json, Codex''s .codex/hooks.json, Gemini CLI''s .gemini/settings.json, GitHub Copilot CLI''s .github/hooks/git-session.json'
            cand --user 'Install into the user''s ~/.claude/settings.json instead of the project''s'
            cand --local 'Install into the project''s git-ignored .claude/settings.local.json (this machine only)'
            cand --codex 'Same as --agent codex'
            cand --gemini 'Same as --agent gemini'
            cand --dry-run 'Print the resulting settings file and change nothing'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;context;help'= {
            cand hook 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini''s AfterTool, BeforeTool, BeforeAgent); always exits 0'
            cand status 'Context fill, window and its source, thresholds fired, wrap-up, compactions'
            cand wrapped-up 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction'
            cand install 'Merge the hook configuration into .claude/settings.json (or the user''s settings)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;context;help;hook'= {
        }
        &'git-session;context;help;status'= {
        }
        &'git-session;context;help;wrapped-up'= {
        }
        &'git-session;context;help;install'= {
        }
        &'git-session;context;help;help'= {
        }
        &'git-session;handoff'= {
            cand -h 'Print help'
            cand --help 'Print help'
            cand write 'Store a new version of a session''s kickoff note, read from a file or stdin'
            cand show 'Print a session''s latest kickoff note (or an older version)'
            cand list 'List the stored versions of kickoff notes: time and first line'
            cand template 'Print a kickoff-note template to fill in'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;handoff;write'= {
            cand -s 'Session the note is for [default: GIT_SESSION, or the session of the current worktree]'
            cand --session 'Session the note is for [default: GIT_SESSION, or the session of the current worktree]'
            cand -F 'Read the note from FILE ("-" for stdin)'
            cand --file 'Read the note from FILE ("-" for stdin)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;handoff;show'= {
            cand --version 'Print version N instead of the latest'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;handoff;list'= {
            cand --all 'List the notes of every session'
            cand --json 'Print a JSON array of {label, version, at, title, path}'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;handoff;template'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;handoff;help'= {
            cand write 'Store a new version of a session''s kickoff note, read from a file or stdin'
            cand show 'Print a session''s latest kickoff note (or an older version)'
            cand list 'List the stored versions of kickoff notes: time and first line'
            cand template 'Print a kickoff-note template to fill in'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;handoff;help;write'= {
        }
        &'git-session;handoff;help;show'= {
        }
        &'git-session;handoff;help;list'= {
        }
        &'git-session;handoff;help;template'= {
        }
        &'git-session;handoff;help;help'= {
        }
        &'git-session;completions'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;man'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;shell-init'= {
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'git-session;worktree-hook'= {
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'git-session;help'= {
            cand create 'Create a session: a worktree on a new branch session/<LABEL>; prints its path'
            cand list 'List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context'
            cand info 'Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives'
            cand switch 'Print the worktree path of a session (the shell integration enters it)'
            cand env 'Print a session''s ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env'
            cand merge 'Integrate sessions into their base branch, then remove them (as cleanup does)'
            cand cleanup 'Remove sessions: worktree, branch and state (refuses while work would be lost)'
            cand setup 'Run the worktree setup ([create] copy and run) in an existing session'
            cand prune 'Remove merged, clean sessions inactive longer than an age (for cron; never prompts)'
            cand restore 'Give a removed session back from its archive (worktree, branch, files and record)'
            cand claim 'Claim paths for the current session (first claim wins; a directory covers what is below it)'
            cand release 'Release the current session''s claims on paths (or all of them)'
            cand claims 'List path claims: path, session, how, since, and whether the claim is in force (live)'
            cand sync 'Share claims through the remote: fetch others'', renew and publish this clone''s, report lost'
            cand guard 'Run the ownership checks the git hooks call (installed by `git session hooks install`)'
            cand hooks 'Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard'
            cand context 'The context-threshold hook and its companions'
            cand handoff 'Versioned kickoff notes per session; the latest is injected into the next agent session'
            cand completions 'Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout'
            cand man 'Write man pages for git-session and each of its subcommands into a directory'
            cand shell-init 'Print the shell integration for bash, zsh or fish (eval it in your shell''s rc file)'
            cand worktree-hook 'Claude Code''s WorktreeCreate/WorktreeRemove hooks (installed by `context install`)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'git-session;help;create'= {
        }
        &'git-session;help;list'= {
        }
        &'git-session;help;info'= {
        }
        &'git-session;help;switch'= {
        }
        &'git-session;help;env'= {
        }
        &'git-session;help;merge'= {
        }
        &'git-session;help;cleanup'= {
        }
        &'git-session;help;setup'= {
        }
        &'git-session;help;prune'= {
        }
        &'git-session;help;restore'= {
        }
        &'git-session;help;claim'= {
        }
        &'git-session;help;release'= {
        }
        &'git-session;help;claims'= {
        }
        &'git-session;help;sync'= {
        }
        &'git-session;help;guard'= {
            cand pre-commit 'Refuse a commit whose staged paths another live session owns (exit 1)'
            cand post-commit 'Check a commit the pre-commit never saw (--no-verify); warns, never fails'
            cand pre-push 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git''s pre-push lines on stdin)'
        }
        &'git-session;help;guard;pre-commit'= {
        }
        &'git-session;help;guard;post-commit'= {
        }
        &'git-session;help;guard;pre-push'= {
        }
        &'git-session;help;hooks'= {
            cand install 'Install the guard where commits made here look for hooks: git''s config-based hooks (git 2.54+), else a hook manager''s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running'
            cand uninstall 'Remove exactly what install added, and put back any hook it had moved aside'
            cand status 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)'
        }
        &'git-session;help;hooks;install'= {
        }
        &'git-session;help;hooks;uninstall'= {
        }
        &'git-session;help;hooks;status'= {
        }
        &'git-session;help;context'= {
            cand hook 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini''s AfterTool, BeforeTool, BeforeAgent); always exits 0'
            cand status 'Context fill, window and its source, thresholds fired, wrap-up, compactions'
            cand wrapped-up 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction'
            cand install 'Merge the hook configuration into .claude/settings.json (or the user''s settings)'
        }
        &'git-session;help;context;hook'= {
        }
        &'git-session;help;context;status'= {
        }
        &'git-session;help;context;wrapped-up'= {
        }
        &'git-session;help;context;install'= {
        }
        &'git-session;help;handoff'= {
            cand write 'Store a new version of a session''s kickoff note, read from a file or stdin'
            cand show 'Print a session''s latest kickoff note (or an older version)'
            cand list 'List the stored versions of kickoff notes: time and first line'
            cand template 'Print a kickoff-note template to fill in'
        }
        &'git-session;help;handoff;write'= {
        }
        &'git-session;help;handoff;show'= {
        }
        &'git-session;help;handoff;list'= {
        }
        &'git-session;help;handoff;template'= {
        }
        &'git-session;help;completions'= {
        }
        &'git-session;help;man'= {
        }
        &'git-session;help;shell-init'= {
        }
        &'git-session;help;worktree-hook'= {
        }
        &'git-session;help;help'= {
        }
    ]
    $completions[$command]
}
