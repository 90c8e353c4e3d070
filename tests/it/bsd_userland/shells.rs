//! The everyday flow in bash, zsh and fish under the shims: the shell integration evaluated as
//! the README says, a session created and entered, a commit and a push running the installed
//! hooks (the shipped files, or our block inside hooks of the user's own), a switch, a merge from
//! inside back to the main worktree, a forced cleanup and the restore command it prints, run as
//! printed. Every step must pass and no shim may have been given a form BSD userland lacks.

use super::{read, shims, Shims};
use crate::common::{self, TestRepo};
use std::path::PathBuf;

const CONFIG: &str = "[claims]\nremote = \"origin\"\ntimeout = \"60s\"\n";

/// A repository whose claims are shared through a bare remote on disk (so that `hooks install`
/// puts a pre-push hook in too), and that remote's directory.
pub(super) fn shared(repo: &TestRepo) -> PathBuf {
    let remote = repo.base().join("remote.git");
    repo.git([
        "init",
        "-q",
        "--bare",
        "-b",
        "main",
        remote.to_str().unwrap(),
    ]);
    repo.write(".git-session.toml", CONFIG);
    repo.git(["add", ".git-session.toml"]);
    repo.git(["commit", "-q", "-m", "shared claims"]);
    repo.git(["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git(["push", "-q", "origin", "main"]);
    remote
}

/// Shell hooks of the repository's own, for `hooks install` to add its block to.
pub(super) fn hooks_of_its_own(repo: &TestRepo) {
    use std::os::unix::fs::PermissionsExt;
    for hook in ["pre-commit", "post-commit", "pre-push"] {
        let path = repo.root.join(".git/hooks").join(hook);
        std::fs::write(&path, "#!/bin/sh\n: a hook that was here before\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The steps, each as (POSIX shells, fish) where they differ; `{root}`, `{one}` and `{two}` are
/// the main worktree and the two sessions' worktrees.
const STEPS: &[(&str, &str)] = &[
    ("git session hooks install >/dev/null", ""),
    ("git session create one >/dev/null", ""),
    ("test \"$PWD\" = {one}", ""),
    ("echo work > work.txt", ""),
    ("git add work.txt", ""),
    ("git commit -q -m work", ""),
    ("git push -q origin session/one", ""),
    ("cd {root}", ""),
    ("git-session switch one >/dev/null", ""),
    ("test \"$PWD\" = {one}", ""),
    ("git session merge 2>/dev/null", ""),
    ("test \"$PWD\" = {root}", ""),
    ("git session create two >/dev/null", ""),
    ("echo scratch > scratch.txt", ""),
    ("cd {root}", ""),
    (
        "git session cleanup --force --yes two 2>\"$HOME/cleanup.err\"",
        "",
    ),
    ("test ! -d {two}", ""),
    (
        "eval \"$(sed -n 's/^restore with: //p' \"$HOME/cleanup.err\")\"",
        "eval (sed -n 's/^restore with: //p' \"$HOME/cleanup.err\")",
    ),
    ("test -f {two}/scratch.txt", ""),
];

/// Runs the flow in `shell` (with `init` first) under fresh shims; `foreign_hooks`: the
/// repository has hooks of its own before `hooks install`, which then adds its block to them.
/// `None` when the shell is not installed (skipped, said once).
fn flow(shell: &str, init: &str, foreign_hooks: bool) -> Option<()> {
    if !common::installed(shell) {
        return None;
    }
    let repo = TestRepo::new();
    shared(&repo);
    if foreign_hooks {
        hooks_of_its_own(&repo);
    }
    let quoted = |p: PathBuf| super::single_quoted(&p.display().to_string());
    let fill = |step: &str| {
        step.replace("{root}", &quoted(repo.root.clone()))
            .replace("{one}", &quoted(repo.sessions_dir().join("one")))
            .replace("{two}", &quoted(repo.sessions_dir().join("two")))
    };
    let fish = shell == "fish";
    let mut script = format!("{init}\n");
    for (n, (posix, fish_form)) in STEPS.iter().enumerate() {
        let step = fill(if fish && !fish_form.is_empty() {
            fish_form
        } else {
            posix
        });
        let code = n + 10;
        script.push_str(&if fish {
            format!("{step}; or begin; echo 'step {code} failed' >&2; exit {code}; end\n")
        } else {
            format!("{step} || {{ echo 'step {code} failed' >&2; exit {code}; }}\n")
        });
    }
    let shims: Shims = shims(&repo.base());
    let mut cmd = shims.command(&repo, shell);
    match shell {
        "bash" => cmd.args(["--norc", "--noprofile"]),
        "zsh" => cmd.arg("-f"),
        _ => cmd.arg("--no-config"),
    };
    let out = cmd
        .current_dir(&repo.root)
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let failed = out
        .status
        .code()
        .and_then(|c| c.checked_sub(10))
        .and_then(|n| STEPS.get(n as usize));
    assert!(
        out.status.success(),
        "{shell} (foreign hooks: {foreign_hooks}): {:?} failed at {failed:?}\nstderr:\n{stderr}",
        out.status
    );
    let complaints = read(&shims.complaints);
    assert!(
        complaints.is_empty(),
        "{shell}: what BSD userland lacks was called:\n{complaints}"
    );
    // The flow ran under the shims: the shell function's mktemp and the pre-push hook's went
    // through them (so the hooks git ran had them first on PATH too).
    let calls = read(&shims.calls);
    assert!(
        calls.lines().any(|l| l.ends_with("/git-session-cd.XXXXXX")),
        "{shell}: the shell function never ran under the shims:\n{calls}"
    );
    assert!(
        calls.lines().any(|l| l.trim_end() == "mktemp"),
        "{shell}: the pre-push hook never ran under the shims:\n{calls}"
    );
    // With hooks of its own, the guard ran from our block inside them (or, where git runs
    // config-based hooks, from its configured line: the same one-line form).
    let config_route = !repo
        .git_try(&repo.root, ["config", "--get-regexp", r"^hook\."])
        .stdout
        .is_empty();
    if foreign_hooks && !config_route {
        let hook = std::fs::read_to_string(repo.root.join(".git/hooks/pre-push")).unwrap();
        assert!(
            hook.contains(": a hook that was here before") && hook.contains(">>> git-session"),
            "{hook}"
        );
    }
    assert_eq!(repo.git(["show", "main:work.txt"]), "work\n");
    Some(())
}

#[test]
fn the_everyday_flow_in_bash_calls_nothing_bsd_lacks() {
    flow("bash", "eval \"$(git session shell-init bash)\"", false);
}

#[test]
fn our_block_in_hooks_of_the_users_own_calls_nothing_bsd_lacks() {
    flow("bash", "eval \"$(git session shell-init bash)\"", true);
}

#[test]
fn the_everyday_flow_in_zsh_calls_nothing_bsd_lacks() {
    flow(
        "zsh",
        // macOS's default shell, with a setting many users have: `^` is a pattern character.
        "setopt EXTENDED_GLOB; eval \"$(git session shell-init zsh)\"",
        false,
    );
}

#[test]
fn the_everyday_flow_in_fish_calls_nothing_bsd_lacks() {
    flow("fish", "git session shell-init fish | source", false);
}
