
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'git-session' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'git-session'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'git-session' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a session: a worktree on a new branch session/<LABEL>; prints its path')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives')
            [CompletionResult]::new('switch', 'switch', [CompletionResultType]::ParameterValue, 'Print the worktree path of a session (the shell integration enters it)')
            [CompletionResult]::new('env', 'env', [CompletionResultType]::ParameterValue, 'Print a session''s ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Integrate sessions into their base branch, then remove them (as cleanup does)')
            [CompletionResult]::new('cleanup', 'cleanup', [CompletionResultType]::ParameterValue, 'Remove sessions: worktree, branch and state (refuses while work would be lost)')
            [CompletionResult]::new('setup', 'setup', [CompletionResultType]::ParameterValue, 'Run the worktree setup ([create] copy and run) in an existing session')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Remove merged, clean sessions inactive longer than an age (for cron; never prompts)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Give a removed session back from its archive (worktree, branch, files and record)')
            [CompletionResult]::new('claim', 'claim', [CompletionResultType]::ParameterValue, 'Claim paths for the current session (first claim wins; a directory covers what is below it)')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Release the current session''s claims on paths (or all of them)')
            [CompletionResult]::new('claims', 'claims', [CompletionResultType]::ParameterValue, 'List path claims: path, session, how, since, and whether the claim is in force (live)')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Share claims through the remote: fetch others'', renew and publish this clone''s, report lost')
            [CompletionResult]::new('guard', 'guard', [CompletionResultType]::ParameterValue, 'Run the ownership checks the git hooks call (installed by `git session hooks install`)')
            [CompletionResult]::new('hooks', 'hooks', [CompletionResultType]::ParameterValue, 'Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'The context-threshold hook and its companions')
            [CompletionResult]::new('handoff', 'handoff', [CompletionResultType]::ParameterValue, 'Versioned kickoff notes per session; the latest is injected into the next agent session')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write man pages for git-session and each of its subcommands into a directory')
            [CompletionResult]::new('shell-init', 'shell-init', [CompletionResultType]::ParameterValue, 'Print the shell integration for bash, zsh or fish (eval it in your shell''s rc file)')
            [CompletionResult]::new('worktree-hook', 'worktree-hook', [CompletionResultType]::ParameterValue, 'Claude Code''s WorktreeCreate/WorktreeRemove hooks (installed by `context install`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;create' {
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'Revision to start from [default: the repository''s main branch, or `base` in config]')
            [CompletionResult]::new('--path', '--path', [CompletionResultType]::ParameterName, 'Worktree directory [default: <worktrees_dir>/<LABEL>]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]')
            [CompletionResult]::new('--attach', '--attach', [CompletionResultType]::ParameterName, 'Register a session in the current worktree instead of creating one')
            [CompletionResult]::new('--approve-run', '--approve-run', [CompletionResultType]::ParameterName, 'Approve the repository''s `[create] run` commands (asked once on a terminal otherwise)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;list' {
            [CompletionResult]::new('--sort', '--sort', [CompletionResultType]::ParameterName, 'Order of the sessions: by label, or the agents that need you first (waiting for a permission, then for input, the longest wait first; then gone, quiet, working, ended) [default: `[list] sort` of the configuration, else label]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print a JSON array (stable keys; see docs/json.md)')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Every column and full paths, even on a narrow terminal')
            [CompletionResult]::new('--watch', '--watch', [CompletionResultType]::ParameterName, 'Redraw in place on a terminal whenever a session or an agent changes (plain output, once per change, elsewhere); q or Ctrl-C ends it')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;info' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (stable keys; see docs/json.md)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;switch' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;env' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, '`sh`: `export K=''V''` lines for eval; `dotenv`: `K=V` lines')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;merge' {
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every session ready to merge (committed, clean, nobody inside), oldest first')
            [CompletionResult]::new('--keep', '--keep', [CompletionResultType]::ParameterName, 'Keep the sessions (worktree and branch) after merging; their claims still end')
            [CompletionResult]::new('--no-check', '--no-check', [CompletionResultType]::ParameterName, 'Skip the `[merge] check` commands (recorded in the audit log)')
            [CompletionResult]::new('--approve-check', '--approve-check', [CompletionResultType]::ParameterName, 'Approve the `[merge] check` commands of the repository''s .git-session.toml')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Compute (and check) every merge, move nothing')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'One JSON object per session on stdout')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;cleanup' {
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Remove even with unmerged commits, uncommitted files or processes inside, after writing an archive ref that holds all of it')
            [CompletionResult]::new('-y', '-y', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (with --force on a terminal)')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do not ask for confirmation (with --force on a terminal)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Say what would be removed, remove nothing')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Say what would be removed, remove nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;setup' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Deadline for each command, such as 30s or 5m [default: create_timeout, 300s]')
            [CompletionResult]::new('--approve-run', '--approve-run', [CompletionResultType]::ParameterName, 'Approve the repository''s `[create] run` commands (asked once on a terminal otherwise)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;prune' {
            [CompletionResult]::new('--older-than', '--older-than', [CompletionResultType]::ParameterName, 'Inactivity after which a merged, clean session is removed [default: stale_after, 7d]')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Say what would be removed, remove nothing')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Say what would be removed, remove nothing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print nothing but errors')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print nothing but errors')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;restore' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]')
            [CompletionResult]::new('--approve-run', '--approve-run', [CompletionResultType]::ParameterName, 'Approve the repository''s `[create] run` commands (asked once on a terminal otherwise)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;claim' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;release' {
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Release every claim of the session')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;claims' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print a JSON array of {path, label, how, since, live} (claims of other clones, with [claims] remote: how "elsewhere", and host, clone, expires)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;sync' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;guard' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('pre-commit', 'pre-commit', [CompletionResultType]::ParameterValue, 'Refuse a commit whose staged paths another live session owns (exit 1)')
            [CompletionResult]::new('post-commit', 'post-commit', [CompletionResultType]::ParameterValue, 'Check a commit the pre-commit never saw (--no-verify); warns, never fails')
            [CompletionResult]::new('pre-push', 'pre-push', [CompletionResultType]::ParameterValue, 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git''s pre-push lines on stdin)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;guard;pre-commit' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;guard;post-commit' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;guard;pre-push' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;guard;help' {
            [CompletionResult]::new('pre-commit', 'pre-commit', [CompletionResultType]::ParameterValue, 'Refuse a commit whose staged paths another live session owns (exit 1)')
            [CompletionResult]::new('post-commit', 'post-commit', [CompletionResultType]::ParameterValue, 'Check a commit the pre-commit never saw (--no-verify); warns, never fails')
            [CompletionResult]::new('pre-push', 'pre-push', [CompletionResultType]::ParameterValue, 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git''s pre-push lines on stdin)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;guard;help;pre-commit' {
            break
        }
        'git-session;guard;help;post-commit' {
            break
        }
        'git-session;guard;help;pre-push' {
            break
        }
        'git-session;guard;help;help' {
            break
        }
        'git-session;hooks' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install the guard where commits made here look for hooks: git''s config-based hooks (git 2.54+), else a hook manager''s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly what install added, and put back any hook it had moved aside')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;hooks;install' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;hooks;uninstall' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;hooks;status' {
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print JSON')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;hooks;help' {
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install the guard where commits made here look for hooks: git''s config-based hooks (git 2.54+), else a hook manager''s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly what install added, and put back any hook it had moved aside')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;hooks;help;install' {
            break
        }
        'git-session;hooks;help;uninstall' {
            break
        }
        'git-session;hooks;help;status' {
            break
        }
        'git-session;hooks;help;help' {
            break
        }
        'git-session;context' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini''s AfterTool, BeforeTool, BeforeAgent); always exits 0')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Context fill, window and its source, thresholds fired, wrap-up, compactions')
            [CompletionResult]::new('wrapped-up', 'wrapped-up', [CompletionResultType]::ParameterValue, 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Merge the hook configuration into .claude/settings.json (or the user''s settings)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;context;hook' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;context;status' {
            [CompletionResult]::new('--agent-session', '--agent-session', [CompletionResultType]::ParameterName, 'The agent session to show [default: the most recently active one linked to the current session]')
            [CompletionResult]::new('--transcript', '--transcript', [CompletionResultType]::ParameterName, 'Any transcript file (Claude Code .jsonl or Codex rollout)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object (stable keys; see docs/json.md)')
            [CompletionResult]::new('--stdin', '--stdin', [CompletionResultType]::ParameterName, 'Read a hook or statusline JSON payload from stdin (its context_window numbers win and are remembered); always exits 0, printing an "unknown" form when nothing is known')
            [CompletionResult]::new('--short', '--short', [CompletionResultType]::ParameterName, 'One short line for a statusline: label and fill of the compaction point, and how many other sessions wait for a permission or input')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;context;wrapped-up' {
            [CompletionResult]::new('--scope', '--scope', [CompletionResultType]::ParameterName, 'How much of the wrap-up was done')
            [CompletionResult]::new('--agent-session', '--agent-session', [CompletionResultType]::ParameterName, 'The agent session [default: the most recently active one linked to the current session]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'git-session;context;install' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'The agent whose hook file to install into: Claude Code''s .claude/settings.json, Codex''s .codex/hooks.json, Gemini CLI''s .gemini/settings.json, GitHub Copilot CLI''s .github/hooks/git-session.json')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Install into the user''s ~/.claude/settings.json instead of the project''s')
            [CompletionResult]::new('--local', '--local', [CompletionResultType]::ParameterName, 'Install into the project''s git-ignored .claude/settings.local.json (this machine only)')
            [CompletionResult]::new('--codex', '--codex', [CompletionResultType]::ParameterName, 'Same as --agent codex')
            [CompletionResult]::new('--gemini', '--gemini', [CompletionResultType]::ParameterName, 'Same as --agent gemini')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the resulting settings file and change nothing')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;context;help' {
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini''s AfterTool, BeforeTool, BeforeAgent); always exits 0')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Context fill, window and its source, thresholds fired, wrap-up, compactions')
            [CompletionResult]::new('wrapped-up', 'wrapped-up', [CompletionResultType]::ParameterValue, 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Merge the hook configuration into .claude/settings.json (or the user''s settings)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;context;help;hook' {
            break
        }
        'git-session;context;help;status' {
            break
        }
        'git-session;context;help;wrapped-up' {
            break
        }
        'git-session;context;help;install' {
            break
        }
        'git-session;context;help;help' {
            break
        }
        'git-session;handoff' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Store a new version of a session''s kickoff note, read from a file or stdin')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a session''s latest kickoff note (or an older version)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the stored versions of kickoff notes: time and first line')
            [CompletionResult]::new('template', 'template', [CompletionResultType]::ParameterValue, 'Print a kickoff-note template to fill in')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;handoff;write' {
            [CompletionResult]::new('-s', '-s', [CompletionResultType]::ParameterName, 'Session the note is for [default: GIT_SESSION, or the session of the current worktree]')
            [CompletionResult]::new('--session', '--session', [CompletionResultType]::ParameterName, 'Session the note is for [default: GIT_SESSION, or the session of the current worktree]')
            [CompletionResult]::new('-F', '-F ', [CompletionResultType]::ParameterName, 'Read the note from FILE ("-" for stdin)')
            [CompletionResult]::new('--file', '--file', [CompletionResultType]::ParameterName, 'Read the note from FILE ("-" for stdin)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;handoff;show' {
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version N instead of the latest')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;handoff;list' {
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'List the notes of every session')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print a JSON array of {label, version, at, title, path}')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;handoff;template' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;handoff;help' {
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Store a new version of a session''s kickoff note, read from a file or stdin')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a session''s latest kickoff note (or an older version)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the stored versions of kickoff notes: time and first line')
            [CompletionResult]::new('template', 'template', [CompletionResultType]::ParameterValue, 'Print a kickoff-note template to fill in')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;handoff;help;write' {
            break
        }
        'git-session;handoff;help;show' {
            break
        }
        'git-session;handoff;help;list' {
            break
        }
        'git-session;handoff;help;template' {
            break
        }
        'git-session;handoff;help;help' {
            break
        }
        'git-session;completions' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;man' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;shell-init' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'git-session;worktree-hook' {
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'git-session;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a session: a worktree on a new branch session/<LABEL>; prints its path')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List sessions: what each agent does, state, age, activity, commits ahead/behind, dirty files, owned paths, context')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Show one session: branch, base, agents, unmerged commits, dirty files, claims, context, archives')
            [CompletionResult]::new('switch', 'switch', [CompletionResultType]::ParameterValue, 'Print the worktree path of a session (the shell integration enters it)')
            [CompletionResult]::new('env', 'env', [CompletionResultType]::ParameterValue, 'Print a session''s ports and names as environment (GIT_SESSION_PORT, ...) for eval or .env')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Integrate sessions into their base branch, then remove them (as cleanup does)')
            [CompletionResult]::new('cleanup', 'cleanup', [CompletionResultType]::ParameterValue, 'Remove sessions: worktree, branch and state (refuses while work would be lost)')
            [CompletionResult]::new('setup', 'setup', [CompletionResultType]::ParameterValue, 'Run the worktree setup ([create] copy and run) in an existing session')
            [CompletionResult]::new('prune', 'prune', [CompletionResultType]::ParameterValue, 'Remove merged, clean sessions inactive longer than an age (for cron; never prompts)')
            [CompletionResult]::new('restore', 'restore', [CompletionResultType]::ParameterValue, 'Give a removed session back from its archive (worktree, branch, files and record)')
            [CompletionResult]::new('claim', 'claim', [CompletionResultType]::ParameterValue, 'Claim paths for the current session (first claim wins; a directory covers what is below it)')
            [CompletionResult]::new('release', 'release', [CompletionResultType]::ParameterValue, 'Release the current session''s claims on paths (or all of them)')
            [CompletionResult]::new('claims', 'claims', [CompletionResultType]::ParameterValue, 'List path claims: path, session, how, since, and whether the claim is in force (live)')
            [CompletionResult]::new('sync', 'sync', [CompletionResultType]::ParameterValue, 'Share claims through the remote: fetch others'', renew and publish this clone''s, report lost')
            [CompletionResult]::new('guard', 'guard', [CompletionResultType]::ParameterValue, 'Run the ownership checks the git hooks call (installed by `git session hooks install`)')
            [CompletionResult]::new('hooks', 'hooks', [CompletionResultType]::ParameterValue, 'Install, remove or inspect the pre-commit and post-commit hooks of the ownership guard')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'The context-threshold hook and its companions')
            [CompletionResult]::new('handoff', 'handoff', [CompletionResultType]::ParameterValue, 'Versioned kickoff notes per session; the latest is injected into the next agent session')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Write man pages for git-session and each of its subcommands into a directory')
            [CompletionResult]::new('shell-init', 'shell-init', [CompletionResultType]::ParameterValue, 'Print the shell integration for bash, zsh or fish (eval it in your shell''s rc file)')
            [CompletionResult]::new('worktree-hook', 'worktree-hook', [CompletionResultType]::ParameterValue, 'Claude Code''s WorktreeCreate/WorktreeRemove hooks (installed by `context install`)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'git-session;help;create' {
            break
        }
        'git-session;help;list' {
            break
        }
        'git-session;help;info' {
            break
        }
        'git-session;help;switch' {
            break
        }
        'git-session;help;env' {
            break
        }
        'git-session;help;merge' {
            break
        }
        'git-session;help;cleanup' {
            break
        }
        'git-session;help;setup' {
            break
        }
        'git-session;help;prune' {
            break
        }
        'git-session;help;restore' {
            break
        }
        'git-session;help;claim' {
            break
        }
        'git-session;help;release' {
            break
        }
        'git-session;help;claims' {
            break
        }
        'git-session;help;sync' {
            break
        }
        'git-session;help;guard' {
            [CompletionResult]::new('pre-commit', 'pre-commit', [CompletionResultType]::ParameterValue, 'Refuse a commit whose staged paths another live session owns (exit 1)')
            [CompletionResult]::new('post-commit', 'post-commit', [CompletionResultType]::ParameterValue, 'Check a commit the pre-commit never saw (--no-verify); warns, never fails')
            [CompletionResult]::new('pre-push', 'pre-push', [CompletionResultType]::ParameterValue, 'Refuse a push whose new commits change a path a session of another clone holds (with `[claims] remote`; reads git''s pre-push lines on stdin)')
            break
        }
        'git-session;help;guard;pre-commit' {
            break
        }
        'git-session;help;guard;post-commit' {
            break
        }
        'git-session;help;guard;pre-push' {
            break
        }
        'git-session;help;hooks' {
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Install the guard where commits made here look for hooks: git''s config-based hooks (git 2.54+), else a hook manager''s own configuration (husky, lefthook, pre-commit, simple-git-hooks), else the hooks directory; idempotent, existing hooks keep running')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove exactly what install added, and put back any hook it had moved aside')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show whether a commit made here runs the guard (exit 1 when the pre-commit guard would not run)')
            break
        }
        'git-session;help;hooks;install' {
            break
        }
        'git-session;help;hooks;uninstall' {
            break
        }
        'git-session;help;hooks;status' {
            break
        }
        'git-session;help;context' {
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse, PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini''s AfterTool, BeforeTool, BeforeAgent); always exits 0')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Context fill, window and its source, thresholds fired, wrap-up, compactions')
            [CompletionResult]::new('wrapped-up', 'wrapped-up', [CompletionResultType]::ParameterValue, 'Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Merge the hook configuration into .claude/settings.json (or the user''s settings)')
            break
        }
        'git-session;help;context;hook' {
            break
        }
        'git-session;help;context;status' {
            break
        }
        'git-session;help;context;wrapped-up' {
            break
        }
        'git-session;help;context;install' {
            break
        }
        'git-session;help;handoff' {
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Store a new version of a session''s kickoff note, read from a file or stdin')
            [CompletionResult]::new('show', 'show', [CompletionResultType]::ParameterValue, 'Print a session''s latest kickoff note (or an older version)')
            [CompletionResult]::new('list', 'list', [CompletionResultType]::ParameterValue, 'List the stored versions of kickoff notes: time and first line')
            [CompletionResult]::new('template', 'template', [CompletionResultType]::ParameterValue, 'Print a kickoff-note template to fill in')
            break
        }
        'git-session;help;handoff;write' {
            break
        }
        'git-session;help;handoff;show' {
            break
        }
        'git-session;help;handoff;list' {
            break
        }
        'git-session;help;handoff;template' {
            break
        }
        'git-session;help;completions' {
            break
        }
        'git-session;help;man' {
            break
        }
        'git-session;help;shell-init' {
            break
        }
        'git-session;help;worktree-hook' {
            break
        }
        'git-session;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
