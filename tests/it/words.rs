//! The words people read: durations, and what a refusal says.

use crate::common;

use common::TestRepo;

#[test]
fn durations_take_units_and_refuse_bare_numbers_with_a_hint() {
    let repo = TestRepo::new();
    for good in ["1h30m", "90m", "7d", "2w"] {
        repo.run(["prune", "--dry-run", "--older-than", good]).ok();
    }
    let out = repo.run(["prune", "--older-than", "7"]).fails(2);
    assert!(
        out.stderr
            .contains("hint: a bare number has no unit: write 7s"),
        "{}",
        out.stderr
    );
    let out = repo.run(["create", "x", "--timeout", "300"]).fails(2);
    assert!(out.stderr.contains("write 300s"), "{}", out.stderr);
    assert!(!repo.sessions_dir().join("x").exists());
    for (value, shown) in [
        ("create_timeout = 300", "\"300\""),
        ("stale_after = \"7\"", "\"7\""),
    ] {
        repo.write(".git-session.toml", &format!("{value}\n"));
        let out = repo.run(["list"]).fails(1);
        assert!(
            out.stderr.contains(&format!("{shown} is not a duration")),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr.contains("hint: a bare number has no unit"),
            "{}",
            out.stderr
        );
    }
    repo.write(
        ".git-session.toml",
        "create_timeout = \"1h30m\"\nstale_after = \"7 days\"\n",
    );
    repo.run(["list"]).ok();
}

#[test]
fn creating_an_existing_session_says_how_to_enter_it() {
    let repo = TestRepo::new();
    let path = repo.run(["create", "dup"]).ok().stdout.trim().to_string();
    let out = repo.run(["create", "dup"]).fails(1);
    assert!(
        out.stderr
            .starts_with("error: session \"dup\" already exists"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("hint: enter it with: cd {path}")),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("remove that directory"),
        "{}",
        out.stderr
    );
}

/// `git session help` and `git session help CMD` print the help (`git session --help` is turned
/// into `man git-session` by git itself, which finds the pages installed under man/man1).
#[test]
fn help_subcommand_works() {
    let repo = TestRepo::new();
    let out = repo.run(["help"]).ok();
    assert!(
        out.stdout.contains("Usage: git-session <COMMAND>"),
        "{}",
        out.stdout
    );
    let out = repo.run(["help", "cleanup"]).ok();
    assert!(
        out.stdout.contains("Usage: git-session cleanup"),
        "{}",
        out.stdout
    );
    assert!(repo.base().join("repo").exists());
}

/// `error:`, `warning:` and `hint:` are styled like clap's only where colour is wanted: never
/// when piped (as here) or with `NO_COLOR`, always with `CLICOLOR_FORCE`.
#[test]
fn message_prefixes_are_coloured_only_where_wanted() {
    let repo = TestRepo::new();
    let plain = repo.run(["cleanup", "nope"]).fails(1);
    assert!(
        plain.stderr.starts_with("error: no session named"),
        "{:?}",
        plain.stderr
    );
    assert!(!plain.stderr.contains('\u{1b}'), "{:?}", plain.stderr);
    let forced = |extra: &[(&str, &str)]| {
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.env("CLICOLOR_FORCE", "1");
        for (k, v) in extra {
            cmd.env(k, v);
        }
        common::to_run(cmd.args(["cleanup", "nope"]).output().unwrap())
    };
    let coloured = forced(&[]);
    assert!(coloured.stderr.contains("\u{1b}["), "{:?}", coloured.stderr);
    assert!(coloured.stderr.contains("error:"), "{:?}", coloured.stderr);
    assert!(coloured.stderr.contains("hint:"), "{:?}", coloured.stderr);
    let no_color = forced(&[("NO_COLOR", "1")]);
    assert!(!no_color.stderr.contains('\u{1b}'), "{:?}", no_color.stderr);
}

/// git's `color.session`/`color.ui` decide over the terminal guess: `never` wins even under
/// `CLICOLOR_FORCE`, `always` colours even a pipe, and `NO_COLOR` beats `always`. The `list`
/// table is styled the same way, and piped it stays plain.
#[test]
fn git_colour_configuration_is_honoured() {
    let repo = TestRepo::new();
    repo.run(["create", "a"]).ok();
    let run = |config: &[(&str, &str)], env: &[(&str, &str)], args: &[&str]| {
        for (k, v) in config {
            repo.git(["config", k, v]);
        }
        let mut cmd = repo.cmd_in(&repo.root);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = common::to_run(cmd.args(args).output().unwrap());
        for (k, _) in config {
            repo.git(["config", "--unset", k]);
        }
        out
    };
    let esc = '\u{1b}';
    let never = run(
        &[("color.ui", "never")],
        &[("CLICOLOR_FORCE", "1")],
        &["cleanup", "nope"],
    );
    assert!(!never.stderr.contains(esc), "{:?}", never.stderr);
    let own_key = run(
        &[("color.ui", "always"), ("color.session", "false")],
        &[],
        &["cleanup", "nope"],
    );
    assert!(
        !own_key.stderr.contains(esc),
        "color.session wins: {:?}",
        own_key.stderr
    );
    let always = run(&[("color.ui", "always")], &[], &["cleanup", "nope"]);
    assert!(always.stderr.contains(esc), "{:?}", always.stderr);
    let listed = run(&[("color.ui", "always")], &[], &["list"]);
    assert!(listed.stdout.contains(esc), "{:?}", listed.stdout);
    let plain = run(&[], &[], &["list"]);
    assert!(!plain.stdout.contains(esc), "{:?}", plain.stdout);
    // The same table once the escapes are gone: styling never moves a column.
    let stripped = common::strip_colour(&listed.stdout);
    assert_eq!(stripped, plain.stdout);
    let no_color = run(&[("color.ui", "always")], &[("NO_COLOR", "1")], &["list"]);
    assert!(!no_color.stdout.contains(esc), "{:?}", no_color.stdout);
}
