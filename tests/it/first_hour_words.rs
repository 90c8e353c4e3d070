//! The small things a newcomer trips over in the first hour (issue 30, item 8): a typo in a
//! label gets the closest one from every command that takes a label, `merge` and `cleanup` with
//! no session here say the same, a duration hint suggests only what is accepted, and the help
//! lists what is true.

use crate::common;
use common::TestRepo;

#[test]
fn a_typo_in_a_label_gets_the_closest_one_from_every_command() {
    let repo = TestRepo::new();
    repo.create("fix-login");
    repo.create("docs");
    for command in ["info", "merge", "cleanup", "switch", "setup"] {
        let out = repo.run([command, "fix-logn"]).fails(1);
        assert_eq!(
            out.stderr,
            "error: no session named \"fix-logn\"\n\
             hint: did you mean fix-login? (`git session list` shows them all)\n",
            "{command}"
        );
    }
    // Nothing close: the few sessions there are, named.
    let out = repo.run(["merge", "zzzzzzzz"]).fails(1);
    insta::assert_snapshot!(out.stderr, @r#"
    error: no session named "zzzzzzzz"
    hint: the sessions here: docs, fix-login
    "#);
}

#[test]
fn merge_and_cleanup_with_no_session_here_say_the_same() {
    let repo = TestRepo::new();
    repo.create("one");
    let merge = repo.run(["merge"]).fails(1);
    let cleanup = repo.run(["cleanup"]).fails(1);
    insta::assert_snapshot!(format!("{}{}", merge.stderr, cleanup.stderr), @r"
    error: no session here
    hint: name one: git session merge LABEL (see git session list)
    error: no session here
    hint: name one: git session cleanup LABEL (see git session list)
    ");
}

#[test]
fn a_zero_duration_is_not_told_to_write_0s() {
    let repo = TestRepo::new();
    let zero = repo.run(["prune", "--older-than", "0"]).fails(2);
    let zero_s = repo.run(["prune", "--older-than", "0s"]).fails(2);
    let bare = repo.run(["prune", "--older-than", "90"]).fails(2);
    insta::assert_snapshot!(format!("{}{}{}", zero.stderr, zero_s.stderr, bare.stderr), @r#"
    error: invalid --older-than "0"
    hint: give a positive duration such as 30s, 90m, 1h30m or 7d
    error: invalid --older-than "0s"
    hint: give a positive duration such as 30s, 90m, 1h30m or 7d
    error: invalid --older-than "90"
    hint: a bare number has no unit: write 90s, 90m, 90h or 90d
    "#);
}

#[test]
fn help_names_the_label_alphabet_and_the_version_only_at_the_top() {
    let repo = TestRepo::new();
    let create = repo.run(["create", "--help"]).ok().stdout;
    assert!(
        create.contains("Session label (A-Z a-z 0-9 . _ - /)"),
        "{create}"
    );
    assert!(create.contains("git session create fix-login -- claude"));
    let top = repo.run(["--help"]).ok().stdout;
    assert!(top.contains("-V, --version"), "{top}");
    for sub in [
        vec!["create"],
        vec!["list"],
        vec!["merge"],
        vec!["handoff", "write"],
    ] {
        let mut args = sub.clone();
        args.push("--help");
        let help = repo.run(&args).ok().stdout;
        assert!(
            !help.contains("--version"),
            "{sub:?} lists --version:\n{help}"
        );
    }
    repo.run(["create", "--version"]).fails(2);
    assert!(repo
        .run(["--version"])
        .ok()
        .stdout
        .starts_with("git-session "));
}
