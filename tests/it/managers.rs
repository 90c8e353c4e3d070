//! The guard beside the hook managers people install, driven for real: husky, lefthook,
//! pre-commit and simple-git-hooks, each at the version `.ci/hook-managers.sh` pins, local hooks
//! only. For each manager, in both install orders (the manager first, git-session first), in the
//! main worktree and in a session worktree, before and after the manager re-installs itself:
//! every commit over another live session's path is refused, and every allowed commit runs the
//! manager's own hook.
//!
//! The managers come from `GIT_SESSION_TEST_MANAGERS` (a directory holding the four commands),
//! else `~/.cache/git-session-ci/managers/bin`, where `.ci/hook-managers.sh` puts them. Missing
//! there, each test is skipped with its reason printed; under CI (`CI=true`) a missing manager
//! fails instead, since `.ci/run` installs them.

use crate::common::{self, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Manager {
    Husky,
    Lefthook,
    PreCommit,
    SimpleGitHooks,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Order {
    ManagerFirst,
    GitSessionFirst,
}

impl Manager {
    fn command(self) -> &'static str {
        match self {
            Manager::Husky => "husky",
            Manager::Lefthook => "lefthook",
            Manager::PreCommit => "pre-commit",
            Manager::SimpleGitHooks => "simple-git-hooks",
        }
    }
}

fn managers_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("GIT_SESSION_TEST_MANAGERS") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache/git-session-ci/managers/bin"),
    };
    Some(dir)
}

/// The directory holding `manager`'s command, or `None` after saying why the test is skipped.
pub(crate) fn available(manager: Manager) -> Option<PathBuf> {
    let dir = managers_dir()?;
    let found = dir.join(manager.command()).exists()
        && Command::new("node").arg("--version").output().is_ok();
    if found {
        return Some(dir);
    }
    let why = format!(
        "{} (or node) is not installed in {}; .ci/hook-managers.sh installs it",
        manager.command(),
        dir.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}");
    }
    eprintln!("!!!! SKIPPED: {why} !!!!");
    None
}

pub(crate) struct Scene {
    pub(crate) repo: TestRepo,
    pub(crate) manager: Manager,
    pub(crate) bin: PathBuf,
}

impl Scene {
    fn path(&self) -> String {
        format!(
            "{}:{}:{}",
            common::bin().parent().unwrap().display(),
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// A command in `dir` with the hermetic environment and the managers on PATH.
    pub(crate) fn cmd(&self, program: &str, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        common::hermetic(&mut cmd, &self.repo.home);
        cmd.env("PATH", self.path()).current_dir(dir);
        cmd
    }

    #[track_caller]
    pub(crate) fn run_ok(&self, program: &str, dir: &Path, args: &[&str]) -> common::Run {
        let out = common::to_run(self.cmd(program, dir).args(args).output().unwrap());
        assert_eq!(
            out.code,
            0,
            "{program} {args:?} failed in {}:\n{}\n{}",
            dir.display(),
            out.stdout,
            out.stderr
        );
        out
    }

    pub(crate) fn session(&self, dir: &Path, args: &[&str]) -> common::Run {
        common::to_run(
            self.cmd(common::bin().to_str().unwrap(), dir)
                .args(args)
                .output()
                .unwrap(),
        )
    }

    pub(crate) fn git(&self, dir: &Path, args: &[&str]) -> common::Run {
        common::to_run(self.cmd("git", dir).args(args).output().unwrap())
    }

    /// The manager's own hook: one line per run in a file outside every worktree.
    pub(crate) fn ran(&self) -> usize {
        std::fs::read_to_string(self.repo.root.join(".git/manager-ran"))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    /// Sets the manager up the way its docs say, with a pre-commit hook of the project's own.
    fn set_up_manager(&self) {
        let root = &self.repo.root;
        let own = r#"echo ran >> "$(git rev-parse --git-common-dir)/manager-ran""#;
        match self.manager {
            Manager::Husky => {
                common::write_in(root, "package.json", "{\n  \"name\": \"demo\"\n}\n");
                self.run_ok("husky", root, &[]);
                common::write_in(root, ".husky/pre-commit", &format!("{own}\n"));
            }
            Manager::Lefthook => {
                common::write_in(
                    root,
                    "lefthook.yml",
                    &format!("pre-commit:\n  commands:\n    own:\n      run: '{own}'\n"),
                );
                self.run_ok("lefthook", root, &["install"]);
            }
            Manager::PreCommit => {
                common::write_in(
                    root,
                    ".pre-commit-config.yaml",
                    &format!(
                        "repos:\n  - repo: local\n    hooks:\n      - id: own\n        name: own\n        entry: sh -c '{}'\n        language: system\n        pass_filenames: false\n        always_run: true\n",
                        own.replace('\'', "")
                    ),
                );
                self.run_ok("pre-commit", root, &["install"]);
            }
            Manager::SimpleGitHooks => {
                let package = serde_json::json!({
                    "name": "demo",
                    "simple-git-hooks": {"pre-commit": own},
                });
                common::write_in(
                    root,
                    "package.json",
                    &format!("{}\n", serde_json::to_string_pretty(&package).unwrap()),
                );
                self.run_ok("simple-git-hooks", root, &[]);
            }
        }
        self.commit_all("the hook manager");
    }

    /// What the manager runs to set its hooks up again (after an update, a fresh clone, `npm
    /// install`'s prepare script).
    pub(crate) fn reinstall_manager(&self) {
        let root = &self.repo.root;
        match self.manager {
            Manager::Husky => self.run_ok("husky", root, &[]),
            Manager::Lefthook => self.run_ok("lefthook", root, &["install", "--force"]),
            Manager::PreCommit => self.run_ok("pre-commit", root, &["install", "-f"]),
            Manager::SimpleGitHooks => self.run_ok("simple-git-hooks", root, &[]),
        };
    }

    /// Commits everything in the main worktree (the hooks' own checks included).
    pub(crate) fn commit_all(&self, message: &str) {
        let root = &self.repo.root;
        self.git(root, &["add", "-A"]);
        let out = self.git(root, &["commit", "-q", "-m", message]);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    }

    /// In `dir`: the guard is in force (status exit 0), a commit over `owned` is refused, and
    /// an unrelated commit goes through and runs the manager's own hook.
    #[track_caller]
    pub(crate) fn check(&self, dir: &Path, owned: &str, step: &str) {
        let status = self.session(dir, &["hooks", "status"]);
        assert_eq!(
            status.code,
            0,
            "{step}: hooks status in {}\n{}\n{}",
            dir.display(),
            status.stdout,
            status.stderr
        );
        common::write_in(dir, owned, &format!("{step}\n"));
        self.git(dir, &["add", "--", owned]);
        let refused = self.git(dir, &["commit", "-q", "-m", "over another session's path"]);
        assert_ne!(
            refused.code,
            0,
            "{step}: a commit over {owned} went through in {}\n{}",
            dir.display(),
            refused.stderr
        );
        let said = format!("{}{}", refused.stdout, refused.stderr);
        assert!(said.contains("owned by session \"a\""), "{step}: {said}");
        self.git(dir, &["reset", "-q", "--", owned]);
        self.git(dir, &["checkout", "-q", "--", owned]);
        let before = self.ran();
        let file = format!("free-{}.txt", step.replace(' ', "-"));
        common::write_in(dir, &file, "free\n");
        self.git(dir, &["add", "--", &file]);
        let allowed = self.git(dir, &["commit", "-q", "-m", "a free path"]);
        assert_eq!(
            allowed.code,
            0,
            "{step}: an unrelated commit was refused in {}\n{}\n{}",
            dir.display(),
            allowed.stdout,
            allowed.stderr
        );
        assert_eq!(
            self.ran(),
            before + 1,
            "{step}: the manager's own hook did not run for a commit in {}",
            dir.display()
        );
    }
}

fn scenario(manager: Manager, order: Order) {
    let Some(bin) = available(manager) else {
        return;
    };
    let repo = TestRepo::new();
    repo.commit_file(&repo.root.clone(), "shared.txt", "shared\n", "shared file");
    let s = Scene { repo, manager, bin };
    let root = s.repo.root.clone();
    match order {
        Order::ManagerFirst => {
            s.set_up_manager();
            let out = s.session(&root, &["hooks", "install"]);
            assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        }
        Order::GitSessionFirst => {
            let out = s.session(&root, &["hooks", "install"]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            s.set_up_manager();
            let status = s.session(&root, &["hooks", "status"]);
            // pre-commit keeps the hook it replaced as `.legacy` and runs it: still in force.
            // The others drop it, and then the status says so.
            if manager != Manager::PreCommit {
                assert_eq!(status.code, 1, "{manager:?} second: {}", status.stdout);
                assert!(status.stderr.contains("would not run"), "{}", status.stderr);
            }
            let out = s.session(&root, &["hooks", "install"]);
            assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        }
    }
    // The configuration the install changed goes to the team, as the install's hint says.
    s.commit_all("the ownership guard in the hook manager's configuration");
    let a = s.repo.create("a");
    let b = s.repo.create("b");
    let claim = s.session(&a, &["claim", "shared.txt"]);
    assert_eq!(claim.code, 0, "{}", claim.stderr);
    s.check(&b, "shared.txt", "session before reinstall");
    s.check(&root, "shared.txt", "main before reinstall");
    s.reinstall_manager();
    s.check(&b, "shared.txt", "session after reinstall");
    s.check(&root, "shared.txt", "main after reinstall");
    // A session made after all this has the guard from its first commit.
    let c = s.repo.create("c");
    s.check(&c, "shared.txt", "new session");
    // And uninstall takes out what install added: the manager's own hook still runs.
    let out = s.session(&root, &["hooks", "uninstall"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let before = s.ran();
    common::write_in(&root, "after.txt", "after\n");
    s.git(&root, &["add", "-A"]);
    let out = s.git(&root, &["commit", "-q", "-m", "after uninstall"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        s.ran(),
        before + 1,
        "the manager's hook stopped after uninstall"
    );
}

#[test]
fn husky_manager_first() {
    scenario(Manager::Husky, Order::ManagerFirst);
}

#[test]
fn husky_git_session_first() {
    scenario(Manager::Husky, Order::GitSessionFirst);
}

#[test]
fn lefthook_manager_first() {
    scenario(Manager::Lefthook, Order::ManagerFirst);
}

#[test]
fn lefthook_git_session_first() {
    scenario(Manager::Lefthook, Order::GitSessionFirst);
}

#[test]
fn pre_commit_manager_first() {
    scenario(Manager::PreCommit, Order::ManagerFirst);
}

#[test]
fn pre_commit_git_session_first() {
    scenario(Manager::PreCommit, Order::GitSessionFirst);
}

#[test]
fn simple_git_hooks_manager_first() {
    scenario(Manager::SimpleGitHooks, Order::ManagerFirst);
}

#[test]
fn simple_git_hooks_git_session_first() {
    scenario(Manager::SimpleGitHooks, Order::GitSessionFirst);
}

/// A switch the manager documents for skipping hooks, set in the environment of `hooks status`
/// and of a commit: (variable, value, whether the manager then skips the guard wherever it
/// runs it from its configuration).
fn switches(manager: Manager) -> &'static [(&'static str, &'static str, bool)] {
    match manager {
        Manager::Husky => &[("HUSKY", "0", true), ("HUSKY", "1", false)],
        Manager::Lefthook => &[
            ("LEFTHOOK", "0", true),
            ("LEFTHOOK", "false", true),
            ("LEFTHOOK_EXCLUDE", "lint,git-session-guard", true),
            ("LEFTHOOK_EXCLUDE", "lint", false),
        ],
        Manager::PreCommit => &[
            ("SKIP", "own,git-session-guard", true),
            ("SKIP", "own", false),
        ],
        // Its check sits at the top of the hook files it generates: it skips the guard once the
        // manager has written the guard's line after it (a re-install), not our block put first.
        Manager::SimpleGitHooks => &[("SKIP_SIMPLE_GIT_HOOKS", "1", true)],
    }
}

/// `hooks status` tells the truth where a manager's own skip switch is set: it says the guard
/// is off exactly when a commit made with that switch goes through, and then names the switch.
/// Every documented switch, and a value of it the manager ignores, before and after the manager
/// re-installs its hooks; husky's switch also from its init.sh.
fn status_tells_the_truth_under_skip_switches(manager: Manager) {
    let Some(bin) = available(manager) else {
        return;
    };
    let repo = TestRepo::new();
    repo.commit_file(&repo.root.clone(), "shared.txt", "shared\n", "shared file");
    let s = Scene { repo, manager, bin };
    let root = s.repo.root.clone();
    s.set_up_manager();
    let out = s.session(&root, &["hooks", "install"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    s.commit_all("the ownership guard in the hook manager's configuration");
    let a = s.repo.create("a");
    let b = s.repo.create("b");
    assert_eq!(s.session(&a, &["claim", "shared.txt"]).code, 0);
    let husky_init = s.repo.home.join(".config/husky/init.sh");
    for reinstalled in [false, true] {
        if reinstalled {
            s.reinstall_manager();
        }
        let mut cases: Vec<(&str, &str, bool)> = switches(manager).to_vec();
        if manager == Manager::Husky {
            cases.push(("init.sh", "export HUSKY=0", true));
        }
        for (var, value, skips) in cases {
            let step = format!("{var}={value}, reinstalled: {reinstalled}");
            let env: Vec<(&str, &str)> = if var == "init.sh" {
                std::fs::create_dir_all(husky_init.parent().unwrap()).unwrap();
                std::fs::write(&husky_init, format!("{value}\n")).unwrap();
                vec![]
            } else {
                vec![(var, value)]
            };
            let status = common::to_run(
                s.cmd(common::bin().to_str().unwrap(), &b)
                    .args(["hooks", "status"])
                    .envs(env.iter().copied())
                    .output()
                    .unwrap(),
            );
            // `list` in that environment warns, with the switch's own fix as the hint.
            let list = common::to_run(
                s.cmd(common::bin().to_str().unwrap(), &root)
                    .args(["list"])
                    .envs(env.iter().copied())
                    .output()
                    .unwrap(),
            );
            // An agent started with the switch in its environment hears it at SessionStart.
            let start = serde_json::json!({"session_id": format!("agent-{step}"), "cwd": b,
                "hook_event_name": "SessionStart", "source": "startup"});
            let identity =
                crate::context_support::hook_raw(&s.repo, &b, start.to_string().as_bytes(), &env)
                    .stdout;
            common::write_in(&b, "shared.txt", &format!("{step}\n"));
            s.git(&b, &["add", "shared.txt"]);
            let commit = common::to_run(
                s.cmd("git", &b)
                    .args(["commit", "-q", "-m", "over a's path"])
                    .envs(env.iter().copied())
                    .output()
                    .unwrap(),
            );
            let _ = std::fs::remove_file(&husky_init);
            let went_through = commit.code == 0;
            if went_through {
                s.git(&b, &["reset", "-q", "--hard", "HEAD~1"]);
            } else {
                s.git(&b, &["reset", "-q", "--hard", "HEAD"]);
            }
            let said_off = status.code != 0;
            assert_eq!(
                said_off, went_through,
                "{manager:?} {step}: status said off: {said_off}, the commit went through: \
                 {went_through}\n{}\n{}",
                status.stderr, commit.stderr
            );
            assert!(
                identity.contains("git session \\\"b\\\""),
                "{step}: {identity}"
            );
            assert_eq!(
                identity.contains("does NOT run"),
                went_through,
                "{step}: {identity}"
            );
            if went_through {
                let named = if var == "init.sh" { "HUSKY=0" } else { var };
                assert!(status.stderr.contains(named), "{step}: {}", status.stderr);
                assert!(identity.contains(named), "{step}: {identity}");
                let hint = list.stderr.lines().find(|l| l.starts_with("hint:"));
                assert!(
                    list.stderr.contains(named)
                        && hint.is_some_and(
                            |h| h.contains("where commits are made") || h.contains("init.sh")
                        ),
                    "{step}: {}",
                    list.stderr
                );
            }
            // Every switch that skips does so once the manager wrote its own files.
            if reinstalled {
                assert_eq!(went_through, skips, "{manager:?} {step}");
            }
        }
    }
}

#[test]
fn husky_skip_switches() {
    status_tells_the_truth_under_skip_switches(Manager::Husky);
}

#[test]
fn lefthook_skip_switches() {
    status_tells_the_truth_under_skip_switches(Manager::Lefthook);
}

#[test]
fn pre_commit_skip_switches() {
    status_tells_the_truth_under_skip_switches(Manager::PreCommit);
}

#[test]
fn simple_git_hooks_skip_switches() {
    status_tells_the_truth_under_skip_switches(Manager::SimpleGitHooks);
}
