mod common;
use common::TestRepo;

#[test]
fn create_prints_the_path_alone_and_lists_it_active() {
    let repo = TestRepo::new();
    let out = repo.run(["create", "fix-login"]).ok();
    let path = repo.sessions_dir().join("fix-login");
    assert_eq!(out.stdout, format!("{}\n", path.display()));
    assert!(path.join("README.md").is_file());
    assert_eq!(
        repo.git_in(&path, ["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/session/fix-login"
    );
    // `cd "$(git session create x)"` as a shell would do it.
    let shell = repo
        .git_cmd(&repo.root)
        .args(["session", "create", "second"])
        .output()
        .unwrap();
    assert!(
        shell.status.success(),
        "{}",
        String::from_utf8_lossy(&shell.stderr)
    );
    let list = repo.run(["list", "--json"]).ok().json();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let row = rows.iter().find(|r| r["label"] == "fix-login").unwrap();
    assert_eq!(row["state"], "active");
    assert_eq!(row["live"], true);
    assert_eq!(row["branch"], "session/fix-login");
    assert_eq!(row["merged"], "ancestor");
    assert_eq!(row["dirty"], 0);
}
