//! `git session completions SHELL` and `git session man DIR` do what users need from them.

use crate::common;
use common::TestRepo;
use std::process::Command;

/// Completes `words` (the cursor on the last one) in a real bash that sourced our bash script,
/// calling `function` the way bash (or git's completion) would; returns COMPREPLY.
fn bash_complete(repo: &TestRepo, preamble: &str, function_call: &str, words: &[&str]) -> String {
    let script = repo.tmp.path().join("git-session.bash");
    let out = repo.run(["completions", "bash"]).ok();
    std::fs::write(&script, out.stdout).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "{preamble}\nsource '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={}\nCOMP_LINE=\"${{COMP_WORDS[*]}}\"\n\
         COMP_POINT=${{#COMP_LINE}}\n{function_call}\necho \"${{COMPREPLY[*]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
    );
    let mut cmd = Command::new("bash");
    common::hermetic(&mut cmd, &repo.home);
    let out = cmd
        .args(["--noprofile", "--norc", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn bash_completes_git_session_and_git_space_session() {
    let repo = TestRepo::new();
    let direct = |words: &[&str]| {
        let call = r#"_git__session git-session "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}""#;
        bash_complete(&repo, "", call, words)
    };
    assert_eq!(direct(&["git-session", "hand"]), "handoff");
    assert_eq!(direct(&["git-session", "handoff", "t"]), "template");
    // Past the first word (upstream clap-rs/clap#6421 breaks this for hyphenated names).
    assert_eq!(
        direct(&["git-session", "handoff", "write", "--s"]),
        "--session"
    );
    assert_eq!(
        direct(&["git-session", "completions", "f"]),
        "fish",
        "shell names complete"
    );

    // What git's own bash completion calls for `git session ...`, global options included.
    let via_git = |words: &[&str]| bash_complete(&repo, "", "_git_session", words);
    assert_eq!(via_git(&["git", "session", "cr"]), "create");
    assert_eq!(
        via_git(&["git", "-C", "/tmp", "session", "handoff", "w"]),
        "write"
    );
    assert_eq!(
        via_git(&["git", "session", "handoff", "show", "--v"]),
        "--version"
    );

    // And through git's real completion, where the system has it.
    let git_completion = "/usr/share/bash-completion/completions/git";
    if std::path::Path::new(git_completion).is_file() {
        let preamble = format!("source {git_completion}");
        let words = ["git", "session", "handoff", "li"];
        let call = "__git_wrap__git_main git li handoff";
        assert_eq!(bash_complete(&repo, &preamble, call, &words), "list");
    } else {
        eprintln!("{git_completion} not present: skipped the check through git's completion");
    }
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    let repo = TestRepo::new();
    let top = [
        "create",
        "list",
        "info",
        "cleanup",
        "prune",
        "claim",
        "release",
        "claims",
        "guard",
        "hooks",
        "context",
        "handoff",
        "completions",
        "man",
    ];
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = repo.run(["completions", shell]).ok().stdout;
        assert!(script.contains("git-session"), "{shell}");
        for sub in top {
            assert!(script.contains(sub), "{shell} script lacks {sub}");
        }
    }
    let bad = repo.run(["completions", "tcsh"]).fails(2);
    assert!(bad.stderr.contains("possible values"), "{}", bad.stderr);
}

#[test]
fn man_writes_one_page_per_command() {
    let repo = TestRepo::new();
    let dir = repo.tmp.path().join("pages/man1");
    let out = repo.run(["man", dir.to_str().unwrap()]).ok();
    let top = std::fs::read_to_string(dir.join("git-session.1")).unwrap();
    assert!(top.starts_with(".ie"), "{}", &top[..40.min(top.len())]);
    assert!(top.contains(".TH git-session 1"), "{top}");
    for page in [
        "git-session-create.1",
        "git-session-handoff.1",
        "git-session-handoff-write.1",
        "git-session-completions.1",
        "git-session-man.1",
    ] {
        assert!(dir.join(page).is_file(), "{page} missing");
    }
    // Real commands only: no page for clap's `help` pseudo-command or its copies of the tree,
    // and no page lists it.
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        pages.iter().all(|p| !p.contains("-help")),
        "help pages: {pages:?}"
    );
    // One line says where they went and whether man finds them there; no path per page.
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with(&format!(
            "wrote {} man pages to {}; ",
            pages.len(),
            dir.display()
        )),
        "{}",
        out.stderr
    );
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(
            !text.contains("\\-help(1)") && !text.contains("the help of the given subcommand"),
            "{page} lists help"
        );
    }
    for page in ["git-session-switch.1", "git-session-merge.1"] {
        assert!(pages.contains(&page.to_string()), "{page} missing");
    }
    let write = std::fs::read_to_string(dir.join("git-session-handoff-write.1")).unwrap();
    assert!(write.contains("session"), "{write}");
    assert!(write.contains("\\-\\-file"), "{write}");

    let file = repo.tmp.path().join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let refused = repo.run(["man", file.to_str().unwrap()]).fails(1);
    assert!(
        refused.stderr.contains("is not a directory") && refused.stderr.contains("hint:"),
        "{}",
        refused.stderr
    );
}

/// After the README's install (binary in `<prefix>/bin`, then `git session man` with no DIR),
/// `git session --help` (git turns it into `man git-session`) opens our page through the real
/// `man`, with no MANPATH set.
#[test]
fn git_session_help_opens_the_installed_man_page() {
    if !common::installed("man") {
        return;
    }
    let repo = TestRepo::new();
    let prefix = repo.tmp.path().join("prefix");
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A copy, not a symlink: the binary finds its prefix from its own path.
    std::fs::copy(common::bin(), bin.join("git-session")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut install = Command::new(bin.join("git-session"));
    common::hermetic(&mut install, &repo.home);
    install.env("PATH", &path).arg("man");
    // The copy was open for writing a moment ago, and a child another test thread forked just
    // then holds that descriptor until it execs: the kernel refuses to run a file open for
    // writing ("Text file busy"). That passes within milliseconds; wait it out.
    let mut tries = 0;
    let out = loop {
        match install.output() {
            Err(e) if e.raw_os_error() == Some(nix::libc::ETXTBSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    assert!(out.status.success(), "{out:?}");
    let page = prefix.join("share/man/man1/git-session.1");
    assert!(page.is_file(), "no page at {}", page.display());

    let mut help = Command::new("git");
    common::hermetic(&mut help, &repo.home);
    let out = help
        .current_dir(&repo.root)
        .env("PATH", &path)
        .env_remove("MANPATH")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .args(["session", "--help"])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        shown.contains("NAME") && shown.contains("git-session - One worktree, one branch"),
        "{shown}"
    );
    // `git session help setup` is clap's, from the binary itself.
    let mut sub = Command::new(bin.join("git-session"));
    common::hermetic(&mut sub, &repo.home);
    let out = sub
        .env("PATH", &path)
        .args(["help", "setup"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("--approve-run"));
}
