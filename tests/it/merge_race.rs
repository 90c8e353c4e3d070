//! A merge that another merge beat to the base (issues 30 and 31): the compare-and-swap on the
//! base decides, the loser makes its result again onto the new base (checked again), once; a
//! second loss is one line with a hint and exit 75, nothing changed. Real processes move the base
//! while the merge runs.

use crate::common::{to_run, Run, TestRepo};
use crate::merge_check::{assert_no_scratch, diverged, user_config};
use std::process::Stdio;

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

/// A check command that commits on main from another process, as another merge would: every
/// time, or (with `once`) only the first time.
fn moving_main(repo: &TestRepo, once: bool) -> String {
    let root = repo.root.display();
    let marker = repo.base().join("moved-once");
    let commit = format!(
        "git -C '{root}' -c core.hooksPath=/dev/null commit -q --no-verify --allow-empty -m \
         'other merge'"
    );
    let command = if once {
        format!(
            "if [ ! -e '{m}' ]; then touch '{m}'; {commit}; fi",
            m = marker.display()
        )
    } else {
        commit
    };
    format!(
        "[merge]\ncheck = [\"{}\"]\n",
        command.replace('\\', "\\\\").replace('"', "\\\"")
    )
}

#[test]
fn a_merge_beaten_to_the_base_integrates_again_onto_it_and_checks_that() {
    let repo = TestRepo::new();
    user_config(&repo, &moving_main(&repo, true));
    let wt = diverged(&repo);
    let out = repo.run(["merge", "feat"]).ok();
    assert!(
        out.stderr
            .contains("another merge moved main first; integrated again onto it"),
        "{}",
        out.stderr
    );
    // The check ran on both results: the second one too, before main moved.
    assert_eq!(out.stderr.matches("running: ").count(), 2, "{}", out.stderr);
    assert_eq!(
        repo.git(["log", "--format=%s", "main"]),
        "add b\nother merge\nadd a\ninitial\n"
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert!(repo.root.join("b.txt").is_file());
    assert!(!wt.exists());
    assert_no_scratch(&repo);
}

#[test]
fn a_merge_beaten_twice_stops_with_one_line_and_its_own_exit_code() {
    let repo = TestRepo::new();
    user_config(&repo, &moving_main(&repo, false));
    let wt = diverged(&repo);
    let tip = rev(&repo, "session/feat");
    let out = repo.run(["merge", "feat"]).fails(75);
    let error: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| !l.starts_with("running: "))
        .collect();
    assert_eq!(
        error,
        vec![
            "error: other merges moved main twice while session \"feat\" was being merged; \
             nothing was merged",
            "hint: run `git session merge feat` again",
        ]
    );
    assert_eq!(
        repo.git(["log", "--format=%s", "main"]),
        "other merge\nother merge\nadd a\ninitial\n"
    );
    assert_eq!(rev(&repo, "session/feat"), tip);
    assert!(wt.join("b.txt").is_file());
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert!(!repo.store().join("merges/feat.toml").exists());
    assert_no_scratch(&repo);
}

#[test]
fn three_merges_at_once_lose_nothing() {
    let repo = TestRepo::new();
    // Long enough that both compute on the same base before either moves it.
    user_config(&repo, "[merge]\ncheck = [\"sleep 2\"]\n");
    let mut tips = Vec::new();
    for label in ["one", "two", "three"] {
        let wt = repo.create(label);
        repo.commit_file(
            &wt,
            &format!("{label}.txt"),
            "x\n",
            &format!("{label} work"),
        );
        tips.push(label);
    }
    let children: Vec<_> = tips
        .iter()
        .map(|label| {
            repo.cmd_in(&repo.root)
                .args(["merge", label])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<Run> = children
        .into_iter()
        .map(|c| to_run(c.wait_with_output().unwrap()))
        .collect();
    // Each lands, or lost twice (three merges at once) and stopped with nothing changed; run
    // again, that one lands too.
    for (label, out) in tips.iter().zip(&outs) {
        match out.code {
            0 => {}
            75 => {
                assert!(
                    repo.labels().contains(&label.to_string()),
                    "{label} kept: {out:?}"
                );
                repo.run(["merge", label]).ok();
            }
            _ => panic!("{label}: {out:?}"),
        }
    }
    let again = outs
        .iter()
        .filter(|o| o.code == 75 || o.stderr.contains("integrated again onto it"))
        .count();
    assert!(again >= 1, "at least one lost the race: {outs:?}");
    let log = repo.git(["log", "--format=%s|%P", "main"]);
    for label in ["one", "two", "three"] {
        assert!(
            log.contains(&format!("{label} work|")),
            "{label} landed: {log}"
        );
    }
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(
        log.lines()
            .all(|l| !l.split('|').nth(1).unwrap().contains(' ')),
        "linear: {log}"
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert_eq!(repo.labels(), Vec::<String>::new());
    assert_no_scratch(&repo);
}
