//! Issue 27: a damaged configuration file never switches the guard off. The guard reads the keys
//! it needs where they are good, enforces with the defaults elsewhere, and warns once per commit
//! with the file, the line and the column; every other command refuses the file, naming them.
use crate::common;
use common::TestRepo;
use std::path::{Path, PathBuf};

/// Damaged files of every kind, each with where the guard's warning and the other commands'
/// error place the problem (`:line:column:`).
const DAMAGED: &[(&str, &[u8], &str, &str)] = &[
    (
        "unknown key",
        b"live_for = \"24h\"\nwortrees_dir = \"x\"\n",
        ":2:1:",
        ":2:1:",
    ),
    (
        "bad value of a key the guard does not read",
        b"[merge]\nstrategy = \"octopus\"\n",
        ":2:12:",
        ":2:12:",
    ),
    // A list the guard cannot take whole is not taken at all: `src/*` would share A's path.
    // The guard names the value it dropped; the strict reader the element it stopped at.
    (
        "bad value of a key the guard reads",
        b"[guard]\nshared = [\"src/*\", 3]\n",
        ":2:10:",
        ":2:20:",
    ),
    (
        "TOML syntax error",
        b"live_for = \"24h\"\n[guard\n",
        ":2:7:",
        ":2:7:",
    ),
    (
        "binary garbage",
        b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00\x00garbage\n",
        ":1:9:",
        ":1:9:",
    ),
];

fn user_file(repo: &TestRepo) -> PathBuf {
    repo.home.join(".config/git-session/config.toml")
}

fn write_bytes(file: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, bytes).unwrap();
}

/// The lines of `stderr` that warn about the configuration.
fn config_warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && l.contains("the guard still enforces"))
        .collect()
}

#[test]
fn every_damaged_file_leaves_the_guard_refusing_with_a_located_warning() {
    let repo = common::a_owns_config();
    let repo_file = repo.root.join(".git-session.toml");
    let user = user_file(&repo);
    for file in [&repo_file, &user] {
        for (what, bytes, at, strict_at) in DAMAGED {
            write_bytes(file, bytes);
            let out = common::b_commits_over_a(&repo, &format!("B: {what}\n"), "B's work").fails(1);
            let said = format!("{what} in {}: {}", file.display(), out.stderr);
            assert!(
                out.stderr
                    .contains("commit refused: src/config.rs is owned by"),
                "{said}"
            );
            let warnings = config_warnings(&out.stderr);
            assert_eq!(warnings.len(), 1, "{said}");
            assert!(
                warnings[0].contains(&format!("{}{at}", file.display())),
                "{said}"
            );
            assert_eq!(repo.head_subject(&repo.root), "lib", "{said}");
            // Every other command refuses the file, naming the place.
            let out = repo.run(["claims"]).fails(1);
            assert!(
                out.stderr
                    .starts_with(&format!("error: {}{strict_at}", file.display())),
                "{what}: {}",
                out.stderr
            );
            std::fs::remove_file(file).unwrap();
        }
    }
    let audit = crate::guard::audit(&repo);
    let damaged: Vec<serde_json::Value> = audit
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|v: &serde_json::Value| v["event"] == "guard-config-damaged")
        .collect();
    assert_eq!(damaged.len(), 2 * DAMAGED.len(), "{audit}");
    assert!(damaged
        .iter()
        .all(|v| v["hook"] == "pre-commit" && v["line"].is_u64() && v["column"].is_u64()));
}

#[test]
fn the_warning_says_what_the_guard_fell_back_to_once_per_commit() {
    let repo = common::a_owns_config();
    repo.write(
        ".git-session.toml",
        "wortrees_dir = \"x\"\n[guard]\nshared = 3\n",
    );
    let refused = common::b_commits_over_a(&repo, "B's edit\n", "B's work").fails(1);
    // The owner's own commit goes through; its post-commit does not warn a second time.
    let passed = repo
        .git_as(&repo.root, "A", ["commit", "-q", "-m", "A's work"])
        .ok();
    assert_eq!(repo.head_subject(&repo.root), "A's work");
    assert_eq!(
        config_warnings(&passed.stderr).len(),
        2,
        "{}",
        passed.stderr
    );
    repo.insta().bind(|| {
        insta::assert_snapshot!(config_warnings(&refused.stderr).join("\n"), @r#"
        warning: [TMP]/repo/.git-session.toml:1:1: unknown field `wortrees_dir`, expected one of `base`, `branch_prefix`, `worktrees_dir`, `create_timeout`, `live_for`, `stale_after`, `archive_keep`, `create`, `guard`, `context`, `merge`, `claims`, `resources`, `notify`, `list`; the guard still enforces (it reads only branch_prefix, live_for, [guard] shared and escape, [claims]), other commands refuse the file until it is fixed
        warning: [TMP]/repo/.git-session.toml:3:10: bad value for `guard.shared`: expected glob patterns such as "*.lock"; the guard still enforces, with the default for `guard.shared` (no path shared)
        "#)
    });
}

#[test]
fn a_good_key_of_a_damaged_file_still_counts() {
    // `[guard] shared` is good while another key is not: the shared glob is honoured.
    let repo = common::a_owns_config();
    repo.write(
        ".git-session.toml",
        "wortrees_dir = \"x\"\n[guard]\nshared = [\"src/*\"]\n",
    );
    let out = common::b_commits_over_a(&repo, "B's edit\n", "B's work").ok();
    assert_eq!(config_warnings(&out.stderr).len(), 1, "{}", out.stderr);
    assert_eq!(repo.head_subject(&repo.root), "B's work");
}
