//! Session labels complete where a command takes one, in the real bash, zsh and fish, for both
//! `git-session ...` and `git session ...`: each test creates two sessions, installs the script
//! `git-session completions SHELL` prints the way the README says, and asks the shell itself.
//!
//! bash runs the completion function as bash would (and through git's own bash completion
//! where the system has it); fish answers `complete -C LINE`; zsh runs interactively in tmux,
//! and the test types TAB and reads the screen.

use crate::common;
use common::{hermetic, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LABELS: [&str; 2] = ["alpha", "beta-2"];

fn repo_with_two_sessions() -> TestRepo {
    let repo = TestRepo::new();
    for label in LABELS {
        repo.create(label);
    }
    repo
}

fn script(repo: &TestRepo, shell: &str) -> String {
    repo.run(["completions", shell]).ok().stdout
}

/// A shell (or tmux) in the hermetic environment, in `dir`. The test has checked that it is
/// [`common::installed`].
fn shell(repo: &TestRepo, program: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    hermetic(&mut cmd, &repo.home);
    cmd.current_dir(dir);
    cmd
}

#[test]
fn the_hidden_command_lists_labels_and_knows_where_they_go() {
    let repo = repo_with_two_sessions();
    let all = repo.run(["__complete-labels"]).ok();
    assert_eq!(all.stdout, "alpha\nbeta-2\n");
    assert_eq!(all.stderr, "");

    let here = repo
        .run(["__complete-labels", "--", "git-session", "info", ""])
        .ok();
    assert_eq!(here.stdout, "alpha\nbeta-2\n");
    let taken = repo.run([
        "__complete-labels",
        "--",
        "git-session",
        "info",
        "alpha",
        "",
    ]);
    let taken = taken.fails(1);
    assert_eq!((taken.stdout.as_str(), taken.stderr.as_str()), ("", ""));
    let new_label = repo.run(["__complete-labels", "--", "git-session", "create", ""]);
    assert_eq!(new_label.fails(1).stdout, "");

    // From a session's own worktree the same store answers.
    let inside = repo.run_in(&repo.sessions_dir().join("alpha"), ["__complete-labels"]);
    assert_eq!(inside.ok().stdout, "alpha\nbeta-2\n");

    // Outside any repository: nothing, silently, successfully.
    let outside = repo.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let none = repo.run_in(&outside, ["__complete-labels"]).ok();
    assert_eq!((none.stdout.as_str(), none.stderr.as_str()), ("", ""));

    // `-C DIR` first: the repository there, as `git -C DIR session` runs; each relative to the
    // one before, an empty one ignored, `~/` the home directory.
    let root = repo.root.display().to_string();
    let from_outside = |args: &[&str]| repo.run_in(&outside, args);
    let there = from_outside(&["__complete-labels", "-C", &root]).ok();
    assert_eq!(there.stdout, "alpha\nbeta-2\n");
    let parent = repo.root.parent().unwrap().display().to_string();
    let name = repo.root.file_name().unwrap().to_str().unwrap();
    let chained = from_outside(&["__complete-labels", "-C", &parent, "-C", "", "-C", name]);
    assert_eq!(chained.ok().stdout, "alpha\nbeta-2\n");
    std::os::unix::fs::symlink(&repo.root, repo.home.join("r")).unwrap();
    let home = from_outside(&[
        "__complete-labels",
        "-C",
        "~/r",
        "--",
        "git-session",
        "info",
        "",
    ]);
    assert_eq!(home.ok().stdout, "alpha\nbeta-2\n");
    let nowhere = from_outside(&[
        "__complete-labels",
        "-C",
        "/nonexistent/x",
        "--",
        "git-session",
        "info",
        "",
    ]);
    assert_eq!(nowhere.fails(1).stdout, "");

    // A file in the store that is no session's does not become a label.
    std::fs::write(repo.store().join("sessions/not a label.toml"), "").unwrap();
    std::fs::write(repo.store().join("sessions/gamma.toml.lock"), "").unwrap();
    assert_eq!(
        repo.run(["__complete-labels"]).ok().stdout,
        "alpha\nbeta-2\n"
    );

    // It is no subcommand: not in help, not offered by the scripts.
    let help = repo.run(["--help"]).ok().stdout;
    assert!(!help.contains("__complete"), "{help}");
    for shell in ["bash", "zsh", "fish"] {
        let text = script(&repo, shell);
        assert!(
            !text.contains("\"__complete-labels\"") && !text.contains("'__complete-labels:"),
            "{shell} offers the hidden command"
        );
    }
}

/// COMPREPLY after `function` completes `words` (the cursor on the last) in a bash that
/// sourced the script, after `preamble`.
fn bash_reply(repo: &TestRepo, preamble: &str, function: &str, words: &[&str]) -> String {
    bash_reply_in(repo, &repo.root, preamble, function, words)
}

/// [`bash_reply`] with bash started in `dir`.
fn bash_reply_in(
    repo: &TestRepo,
    dir: &Path,
    preamble: &str,
    function: &str,
    words: &[&str],
) -> String {
    let path = repo.tmp.path().join("git-session.bash");
    std::fs::write(&path, script(repo, "bash")).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "{preamble}\nsource '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\n\
         COMP_LINE=\"${{COMP_WORDS[*]}}\"\nCOMP_POINT=${{#COMP_LINE}}\n\
         {function} \"${{COMP_WORDS[0]}}\" \"${{COMP_WORDS[COMP_CWORD]}}\" \
         \"${{COMP_WORDS[COMP_CWORD-1]}}\"\necho \"${{COMPREPLY[*]}}\"",
        path.display(),
        quoted.join(" "),
        words.len() - 1,
    );
    let out = shell(repo, "bash", dir)
        .args(["--noprofile", "--norc", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn bash_completes_labels_for_both_spellings() {
    if !common::installed("bash") {
        return;
    }
    let repo = repo_with_two_sessions();
    let both = LABELS.join(" ");
    // What `complete -F` runs for `git-session ...`.
    let direct = |words: &[&str]| bash_reply(&repo, "", "_git_session_complete", words);
    assert_eq!(direct(&["git-session", "info", ""]), both);
    assert_eq!(direct(&["git-session", "info", "b"]), "beta-2");
    assert_eq!(direct(&["git-session", "cleanup", "alpha", ""]), both);
    assert_eq!(direct(&["git-session", "handoff", "show", ""]), both);
    assert_eq!(direct(&["git-session", "setup", ""]), both);
    assert_eq!(
        direct(&["git-session", "handoff", "list", "--json", ""]),
        both
    );
    assert_eq!(direct(&["git-session", "handoff", "write", "-s", ""]), both);
    assert_eq!(
        direct(&["git-session", "handoff", "write", "--session", "=", "al"]),
        "alpha",
        "bash splits --session=al at the ="
    );
    // Elsewhere the generated completion answers as before.
    assert_eq!(direct(&["git-session", "info", "alpha", "--j"]), "--json");
    assert_eq!(direct(&["git-session", "hand"]), "handoff");
    assert!(!direct(&["git-session", "info", "alpha", ""]).contains("alpha"));
    assert!(!direct(&["git-session", "create", ""]).contains("alpha"));

    // `git session ...`: what git's bash completion calls, global options included.
    let via_git = |words: &[&str]| bash_reply(&repo, "", "_git_session", words);
    assert_eq!(via_git(&["git", "session", "info", ""]), both);
    assert_eq!(via_git(&["git", "-C", ".", "session", "cleanup", ""]), both);
    // `git -C DIR session ...` from elsewhere: the labels of the repository in DIR, with DIR as
    // typed (quoted, escaped, relative to an earlier -C).
    let elsewhere = repo.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let root = repo.root.display().to_string();
    let parent = repo.root.parent().unwrap().display().to_string();
    let name = repo.root.file_name().unwrap().to_str().unwrap().to_string();
    let from_elsewhere =
        |words: &[&str]| bash_reply_in(&repo, &elsewhere, "", "_git_session", words);
    assert_eq!(from_elsewhere(&["git", "session", "info", ""]), "");
    let quoted = format!("\"{root}\"");
    for dir_words in [
        vec!["-C", root.as_str()],
        vec!["-C", quoted.as_str()],
        vec!["-C", parent.as_str(), "--no-pager", "-C", name.as_str()],
    ] {
        let mut words = vec!["git"];
        words.extend(dir_words);
        words.extend(["session", "info", ""]);
        assert_eq!(from_elsewhere(&words), both, "{words:?}");
    }

    // And through git's real completion, where the system has it.
    let git_completion = "/usr/share/bash-completion/completions/git";
    if Path::new(git_completion).is_file() {
        let preamble = format!("source {git_completion}");
        let through = |words: &[&str]| bash_reply(&repo, &preamble, "__git_wrap__git_main", words);
        assert_eq!(through(&["git", "session", "info", ""]), both);
        let through_elsewhere = |words: &[&str]| {
            bash_reply_in(&repo, &elsewhere, &preamble, "__git_wrap__git_main", words)
        };
        assert_eq!(
            through_elsewhere(&["git", "-C", &root, "session", "info", ""]),
            both
        );
        assert_eq!(
            through(&["git", "session", "handoff", "show", "a"]),
            "alpha"
        );
    } else {
        eprintln!("{git_completion} not present: skipped the check through git's completion");
    }
}

/// The candidates fish offers for `line` (`complete -C`), without descriptions.
fn fish_candidates(repo: &TestRepo, dir: &Path, line: &str) -> Vec<String> {
    let out = shell(repo, "fish", dir)
        .env("GS_LINE", line)
        .args(["-c", "complete -C \"$GS_LINE\""])
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "fish: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut words: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    words.sort();
    words
}

fn install_fish(repo: &TestRepo, dir: &str) -> PathBuf {
    let dir = repo.home.join(".config/fish").join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("git-session.fish");
    std::fs::write(&file, script(repo, "fish")).unwrap();
    file
}

#[test]
fn fish_completes_labels_for_both_spellings() {
    if !common::installed("fish") {
        return;
    }
    let repo = repo_with_two_sessions();
    // The README's place: read at startup, so the `git session` bridge is in place before
    // fish's own git completion (which in 3.6 never reaches git-session's) runs.
    install_fish(&repo, "conf.d");
    let at = |line: &str| fish_candidates(&repo, &repo.root, line);
    for line in [
        "git-session info ",
        "git session info ",
        "git -C . --no-pager session info ",
        "git-session cleanup alpha ",
        "git session handoff show ",
        "git session handoff list ",
        "git-session handoff write --session ",
        "git session handoff write -s ",
    ] {
        assert_eq!(at(line), LABELS, "{line:?}");
    }
    assert_eq!(at("git session info b"), ["beta-2"]);
    assert_eq!(
        at("git session handoff write --session="),
        ["--session=alpha", "--session=beta-2"]
    );
    // Everything else still completes as before, and git's own completion is untouched.
    assert_eq!(at("git session info alpha "), Vec::<String>::new());
    assert!(at("git session in").contains(&"info".to_string()));
    assert!(at("git session handoff ").contains(&"write".to_string()));
    assert!(!at("git-session create ").contains(&"alpha".to_string()));
    assert!(at("git comm").contains(&"commit".to_string()));
    assert!(!at("git log ").contains(&"alpha".to_string()));

    // `git -C DIR session ...` from elsewhere answers for DIR; in the same shell, a plain
    // `git-session` afterwards answers for where it stands again.
    let elsewhere = repo.tmp.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let line = format!("git -C {} session info ", repo.root.display());
    assert_eq!(fish_candidates(&repo, &elsewhere, &line), LABELS, "{line}");
    let out = shell(&repo, "fish", &elsewhere)
        .env("GS_LINE", &line)
        .args([
            "-c",
            "complete -C \"$GS_LINE\" >/dev/null; complete -C 'git-session info '",
        ])
        .output()
        .unwrap();
    let after = String::from_utf8(out.stdout).unwrap();
    assert!(!after.contains("alpha"), "{after}");
}

#[test]
fn fish_completes_git_session_from_the_completions_directory() {
    if !common::installed("fish") {
        return;
    }
    let repo = repo_with_two_sessions();
    // Autoloaded by the command's name: `git-session ...` completes (and, on fish versions that
    // hand `git session` to git-session's completions, so does that).
    install_fish(&repo, "completions");
    assert_eq!(
        fish_candidates(&repo, &repo.root, "git-session info "),
        LABELS
    );
}

/// An interactive shell in a private tmux server, removed on drop.
struct Tmux {
    socket: PathBuf,
    repo_home: PathBuf,
}

impl Tmux {
    fn start(repo: &TestRepo, dir: &Path, command: &str) -> Tmux {
        let socket = repo.tmp.path().join("tmux.sock");
        let tmux = Tmux {
            socket,
            repo_home: repo.home.clone(),
        };
        let out = tmux
            .cmd(repo, dir)
            .args(["new-session", "-d", "-x", "160", "-y", "40", command])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn cmd(&self, repo: &TestRepo, dir: &Path) -> Command {
        let mut cmd = shell(repo, "tmux", dir);
        cmd.env("TERM", "xterm-256color")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"]);
        cmd
    }

    fn send(&self, keys: &[&str]) {
        let mut cmd = Command::new("tmux");
        cmd.env("HOME", &self.repo_home).arg("-S").arg(&self.socket);
        let status = cmd.arg("send-keys").args(keys).status().unwrap();
        assert!(status.success());
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .env("HOME", &self.repo_home)
            .arg("-S")
            .arg(&self.socket)
            .args(["capture-pane", "-p"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once `done` holds for it; fails with the screen after 20 s.
    fn wait(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waited for {what}; the screen shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .env("HOME", &self.repo_home)
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

#[test]
fn zsh_completes_labels_for_both_spellings() {
    if !common::installed("zsh") || !common::installed("tmux") {
        return;
    }
    let repo = repo_with_two_sessions();
    // The README's install: the file `_git-session` in a directory on $fpath, then compinit.
    let functions = repo.home.join(".zfunc");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(functions.join("_git-session"), script(&repo, "zsh")).unwrap();
    let rc = format!(
        "fpath=({} $fpath)\nautoload -Uz compinit && compinit -u -d {}\nPROMPT='READY> '\n",
        functions.display(),
        repo.home.join(".zcompdump").display()
    );
    std::fs::write(repo.home.join(".zshrc"), rc).unwrap();
    let tmux = Tmux::start(&repo, &repo.root, "zsh --no-globalrcs -i");
    tmux.wait("the prompt", |s| s.contains("READY>"));

    for line in [
        "git-session info ",
        "git session info ",
        "git session cleanup alpha ",
        "git-session handoff show ",
        "git session handoff write --session ",
    ] {
        // A fresh screen, then the line and TAB: both labels are listed under it.
        tmux.send(&["C-u", "C-l"]);
        tmux.wait("a cleared screen", |s| {
            s.contains("READY>") && !s.contains("beta-2")
        });
        tmux.send(&["-l", line]);
        tmux.send(&["Tab"]);
        tmux.wait(&format!("both labels after {line:?}"), |s| {
            let below: String = s.split(line.trim_end()).skip(1).collect();
            LABELS.iter().all(|l| below.contains(l))
        });
    }
    // One candidate: TAB writes it into the line.
    tmux.send(&["C-u", "C-l"]);
    tmux.wait("a cleared screen", |s| {
        s.contains("READY>") && !s.contains("beta-2")
    });
    tmux.send(&["-l", "git session info b"]);
    tmux.send(&["Tab"]);
    tmux.wait("the label inserted", |s| {
        s.contains("READY> git session info beta-2")
    });
    // From the home directory, `git -C ~/r session ...` answers for the repository at ~/r.
    std::os::unix::fs::symlink(&repo.root, repo.home.join("r")).unwrap();
    tmux.send(&["C-u", "C-l"]);
    tmux.send(&["-l", "cd ~ && clear"]);
    tmux.send(&["Enter"]);
    tmux.wait("the home directory", |s| {
        s.contains("READY>") && !s.contains("beta-2") && !s.contains("cd ~")
    });
    let line = "git -C ~/r session info ";
    tmux.send(&["-l", line]);
    tmux.send(&["Tab"]);
    tmux.wait(&format!("both labels after {line:?}"), |s| {
        let below: String = s.split(line.trim_end()).skip(1).collect();
        LABELS.iter().all(|l| below.contains(l))
    });
}
