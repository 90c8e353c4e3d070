//! `[resources]`: each session leases a block of ports and names first-claim-wins, with real
//! concurrent `create` processes, a real listening socket, a kill at the instant after the
//! lease, and the environment its programs get.

use crate::common;
use common::TestRepo;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Stdio;

fn repo_with(resources: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".git-session.toml", &format!("[resources]\n{resources}"));
    repo
}

/// `blocks`, with the ports named as the test's expectations name them.
fn blocks_as_written(repo: &TestRepo, ports: common::Ports) -> Vec<(String, u64, String)> {
    blocks(repo)
        .into_iter()
        .map(|(l, first, span)| (l, ports.unshift_port(first), ports.unshift(&span)))
        .collect()
}

/// label -> (first port, ports) from `list --json`.
fn blocks(repo: &TestRepo) -> Vec<(String, u64, String)> {
    repo.run(["list", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let r = &s["resources"];
            (
                s["label"].as_str().unwrap().to_string(),
                r["port"].as_u64().unwrap_or_else(|| panic!("{s}")),
                r["ports"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn twenty_concurrent_creates_get_twenty_disjoint_blocks() {
    let ports = common::free_ports(21000, 1000);
    let repo = repo_with(&format!("ports = 10\nport_range = \"{}\"\n", ports.range()));
    let children: Vec<_> = (0..20)
        .map(|i| {
            repo.cmd_in(&repo.root)
                .args(["create", &format!("s{i:02}")])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        common::to_run(child.wait_with_output().unwrap()).ok();
    }
    let got = blocks_as_written(&repo, ports);
    assert_eq!(got.len(), 20, "{got:?}");
    let mut ports = BTreeSet::new();
    for (label, first, span) in &got {
        assert_eq!(span, &format!("{first}-{}", first + 9), "{label}");
        assert!(
            (21000..=21990).contains(first) && first % 10 == 0,
            "{label}: {first}"
        );
        for p in *first..first + 10 {
            assert!(ports.insert(p), "port {p} given twice: {got:?}");
        }
    }
    assert_eq!(ports.len(), 200);
}

#[test]
fn a_port_a_program_listens_on_is_passed_over() {
    // Ports below the ephemeral range here, but a CI machine is not ours: its own listeners
    // (one at 28000-28009 once) and short-lived sockets come and go in any range. A wrong answer
    // fails only when the block was seen free both before and after the `create` that gave
    // it; when a port of it was busy around that instant, the attempt says nothing and runs
    // again in a fresh repository on another range.
    let mut noise = Vec::new();
    let mut from = 28200;
    for _ in 0..6 {
        match passed_over_then_taken_again(from) {
            Ok(()) => return,
            Err((start, why)) => {
                noise.push(why);
                from = start + 30;
            }
        }
    }
    panic!(
        "every attempt met ports busy from outside the test (ephemeral range {:?}): {noise:#?}",
        std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap_or_default()
    );
}

/// One attempt in thirty free ports at or above `from`: a listener on the first block's fourth
/// port sends the first session to the second block; its listener gone, the next session gets
/// the first block. `Err` when ports of the block were busy from outside at the deciding
/// instant, with the attempt's start and what was busy.
fn passed_over_then_taken_again(from: u16) -> Result<(), (u16, String)> {
    let free = git_session::internals::port_free;
    let busy_in = |first: u16| {
        (first..first + 10)
            .filter(|&p| !free(p))
            .collect::<Vec<_>>()
    };
    let start = (from..29500)
        .step_by(30)
        .find(|&s| (s..s + 30).all(free))
        .expect("thirty free ports in 28200-29499");
    // Not the block's first port: every port of a block is checked.
    let listener = std::net::TcpListener::bind(("127.0.0.1", start + 3)).unwrap();
    let repo = repo_with(&format!(
        "ports = 10\nport_range = \"{start}-{}\"\n",
        start + 29
    ));
    repo.create("a");
    let (_, first, _) = blocks(&repo).remove(0);
    // The first block holds the test's own listener: handing it out is wrong whatever else is
    // busy. Only the third block instead of the second can be outside noise.
    assert_ne!(
        first,
        u64::from(start),
        "the block holding busy port {} was handed out",
        start + 3
    );
    if first != u64::from(start) + 10 {
        let busy = busy_in(start + 10);
        assert!(
            !busy.is_empty(),
            "the free second block was passed over for {first}"
        );
        return Err((start, format!("{start}: a: second block busy {busy:?}")));
    }
    // Its listener gone, the first block is free again for the next session: at once on Linux
    // and macOS (a listener that accepted nothing leaves no TIME_WAIT behind).
    drop(listener);
    let busy = busy_in(start);
    if !busy.is_empty() {
        return Err((start, format!("{start}: after the listener: busy {busy:?}")));
    }
    repo.create("b");
    let b = blocks(&repo)
        .into_iter()
        .find(|(l, _, _)| l == "b")
        .unwrap();
    if b.1 != u64::from(start) {
        let busy = busy_in(start);
        assert!(
            !busy.is_empty(),
            "the freed block was passed over for {} though free before and after",
            b.1
        );
        return Err((start, format!("{start}: b: first block busy {busy:?}")));
    }
    Ok(())
}

#[test]
fn cleanup_frees_the_block_and_a_full_range_is_refused_leaving_nothing() {
    let ports = common::free_ports(23000, 20);
    let repo = repo_with(&format!("ports = 10\nport_range = \"{}\"\n", ports.range()));
    repo.create("a");
    repo.create("b");
    let out = repo.run(["create", "c"]).fails(1);
    let stderr = ports.unshift(&out.stderr);
    let mut s = repo.insta();
    s.add_filter(r"\d+ blocks have", "[N] blocks have");
    s.bind(|| insta::assert_snapshot!(stderr, @r"
    error: cannot create the session: no free block of 10 ports in 23000-23019: 2 sessions hold blocks, [N] blocks have a port in use on this machine
    hint: remove sessions you are done with (git session cleanup), or widen [resources] port_range or lower ports in .git-session.toml
    "));
    // Refused before anything was made: no worktree, branch or record of c.
    assert!(!repo.sessions_dir().join("c").exists());
    assert_eq!(repo.git(["branch", "--list", "session/c"]), "");
    assert_eq!(repo.labels(), ["a", "b"]);
    let a = blocks(&repo)
        .into_iter()
        .find(|(l, _, _)| l == "a")
        .unwrap();
    repo.run(["cleanup", "a"]).ok();
    repo.create("c");
    let c = blocks(&repo)
        .into_iter()
        .find(|(l, _, _)| l == "c")
        .unwrap();
    assert_eq!(c.1, a.1, "c gets the block a gave back");
}

#[test]
fn a_create_killed_after_its_lease_leaves_no_lease_behind() {
    let ports = common::free_ports(24000, 10);
    let repo = repo_with(&format!("ports = 10\nport_range = \"{}\"\n", ports.range()));
    let out = repo
        .cmd_in(&repo.root)
        .args(["create", "killed"])
        .env("GIT_SESSION_TEST_KILL_AT", "create:leased")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed by its stop point");
    let leases = std::fs::read_to_string(repo.store().join("leases.toml")).unwrap();
    assert!(leases.contains("killed"), "{leases}");
    // The next command rolls the creation back, and its lease with it: the one block is free.
    repo.create("next");
    assert_eq!(
        blocks_as_written(&repo, ports),
        [("next".to_string(), 24000, "24000-24009".to_string())]
    );
    let leases = std::fs::read_to_string(repo.store().join("leases.toml")).unwrap();
    assert!(!leases.contains("killed"), "{leases}");
}

#[test]
fn a_lease_whose_session_is_gone_is_taken_again_and_pruned() {
    let ports = common::free_ports(24100, 10);
    let repo = repo_with(&format!("ports = 10\nport_range = \"{}\"\n", ports.range()));
    // What a removal killed between the record and the lease leaves: a lease of nobody.
    let ghost = |label: &str| {
        format!(
            "[[lease]]\nlabel = \"{label}\"\nport_first = {}\nport_count = 10\n\
             since = \"2026-01-01T00:00:00Z\"\n\n",
            ports.base
        )
    };
    std::fs::create_dir_all(repo.store()).unwrap();
    let file = repo.store().join("leases.toml");
    std::fs::write(&file, format!("version = 1\n\n{}", ghost("ghost"))).unwrap();
    repo.create("a");
    assert_eq!(
        blocks_as_written(&repo, ports)[0].1,
        24100,
        "the ghost's block is taken again"
    );
    repo.run(["cleanup", "a"]).ok();
    std::fs::write(&file, format!("version = 1\n\n{}", ghost("ghost2"))).unwrap();
    let out = repo.run(["prune", "--dry-run"]).ok();
    assert!(!out.stdout.contains("ghost2"), "{}", out.stdout);
    let out = repo.run(["prune"]).ok();
    assert!(
        out.stdout
            .contains("released the ports and names of ghost2, a session that is gone"),
        "{}",
        out.stdout
    );
    assert!(!file.exists());
}

#[test]
fn setup_commands_create_dash_dash_and_env_see_the_resources() {
    let ports = common::free_ports(25000, 100);
    let repo = repo_with(&format!(
        "ports = 3\nport_range = \"{}\"\n[resources.names]\ndatabase = \"app_{{label}}\"\n\
         compose = \"{{label}}_stack\"\n[create]\nrun = [\"env | grep -E '^GIT_SESSION_(PORTS?|DATABASE|COMPOSE)=' | sort > session.env\"]\n",
        ports.range()
    ));
    let wt = PathBuf::from(
        repo.run(["create", "Fix-Login.2", "--approve-run"])
            .ok()
            .stdout
            .trim_end(),
    );
    let seen = ports.unshift(&std::fs::read_to_string(wt.join("session.env")).unwrap());
    assert_eq!(
        seen,
        "GIT_SESSION_COMPOSE=fix_login_2_stack\nGIT_SESSION_DATABASE=app_fix_login_2\n\
         GIT_SESSION_PORT=25000\nGIT_SESSION_PORTS=25000-25002\n"
    );

    let out = repo
        .run(["create", "other", "--approve-run", "--", "env"])
        .ok();
    let stdout = ports.unshift(&out.stdout);
    let mut vars: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            // What create gives CMD. Inherited, not given: the hook budget the harness sets, and
            // any GIT_SESSION_* this test process has itself (CI exports GIT_SESSION_TEST_*).
            let name = l.split('=').next().unwrap_or("");
            name.starts_with("GIT_SESSION")
                && name != "GIT_SESSION_HOOK_BUDGET"
                && (name == "GIT_SESSION" || std::env::var_os(name).is_none())
        })
        .collect();
    vars.sort();
    assert_eq!(
        vars,
        [
            "GIT_SESSION=other",
            "GIT_SESSION_COMPOSE=other_stack",
            "GIT_SESSION_DATABASE=app_other",
            "GIT_SESSION_PORT=25003",
            "GIT_SESSION_PORTS=25003-25005",
        ]
    );

    let out = repo.run_in(&wt, ["env"]).ok();
    insta::assert_snapshot!(ports.unshift(&out.stdout), @r"
    export GIT_SESSION_PORT=25000
    export GIT_SESSION_PORTS=25000-25002
    export GIT_SESSION_COMPOSE=fix_login_2_stack
    export GIT_SESSION_DATABASE=app_fix_login_2
    ");
    let out = repo.run(["env", "other", "--format", "dotenv"]).ok();
    insta::assert_snapshot!(ports.unshift(&out.stdout), @r"
    GIT_SESSION_PORT=25003
    GIT_SESSION_PORTS=25003-25005
    GIT_SESSION_COMPOSE=other_stack
    GIT_SESSION_DATABASE=app_other
    ");
    // What `env` prints is what a shell takes: eval'd by sh, the values come back whole.
    let script = format!(
        "eval \"$({} env other)\" && echo \"$GIT_SESSION_PORTS $GIT_SESSION_DATABASE\"",
        common::bin().display()
    );
    let mut sh = std::process::Command::new("sh");
    common::hermetic(&mut sh, &repo.home);
    let out = common::to_run(
        sh.args(["-c", &script])
            .current_dir(&repo.root)
            .output()
            .unwrap(),
    )
    .ok();
    assert_eq!(ports.unshift(&out.stdout), "25003-25005 app_other\n");

    let info = ports.unshift(&repo.run(["info", "other"]).ok().stdout);
    assert!(
        info.contains("resources ports 25003-25005, compose other_stack, database app_other"),
        "{info}"
    );
    let json = repo.run(["info", "other", "--json"]).ok().json();
    assert_eq!(
        ports.unshift(
            json["resources"]["env"]["GIT_SESSION_PORT"]
                .as_str()
                .unwrap()
        ),
        "25003"
    );
}

#[test]
fn a_session_without_resources_prints_nothing_and_says_so() {
    let repo = TestRepo::new();
    repo.create("plain");
    let out = repo.run(["env", "plain"]).ok();
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("holds no ports or names"),
        "{}",
        out.stderr
    );
    let json = repo.run(["list", "--json"]).ok().json();
    assert!(json[0]["resources"].is_null(), "{json}");
}

#[test]
fn a_bad_resources_section_is_refused_with_its_place() {
    let repo = repo_with("ports = 10\n[resources.names]\ndb = \"drop table;{label}\"\n");
    let out = repo.run(["create", "x"]).fails(1);
    assert!(
        out.stderr
            .contains(".git-session.toml:4:6: bad value for `resources.names.db`"),
        "{}",
        out.stderr
    );
}

#[test]
fn an_attached_session_leases_like_any_other_and_gives_back_at_cleanup() {
    let ports = common::free_ports(24200, 20);
    let repo = repo_with(&format!(
        "ports = 10\nport_range = \"{}\"\n[resources.names]\ndatabase = \"app_{{label}}\"\n",
        ports.range()
    ));
    let out = repo.run(["create", "--attach", "here"]).ok();
    assert!(
        ports.unshift(&out.stderr).contains(
            "it holds GIT_SESSION_PORT=24200 GIT_SESSION_PORTS=24200-24209 \
             GIT_SESSION_DATABASE=app_here; `eval \"$(git session env here)\"` exports them here"
        ),
        "{}",
        out.stderr
    );
    repo.create("other");
    assert_eq!(
        blocks_as_written(&repo, ports),
        [
            ("here".to_string(), 24200, "24200-24209".to_string()),
            ("other".to_string(), 24210, "24210-24219".to_string()),
        ]
    );
    // In the worktree it is attached to, `env` gives its own.
    let env = ports.unshift(&repo.run(["env"]).ok().stdout);
    assert!(
        env.contains("export GIT_SESSION_PORT=24200\n")
            && env.contains("export GIT_SESSION_DATABASE=app_here\n"),
        "{env}"
    );
    // A full range refuses the attach and leaves no session behind.
    let out = repo.run(["create", "--attach", "third"]).fails(1);
    assert!(
        out.stderr.contains("no free block of 10 ports"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.labels(), ["here", "other"]);
    // Its cleanup gives the block back: the next session has it.
    repo.run(["cleanup", "here"]).ok();
    repo.run(["create", "--attach", "third"]).ok();
    assert_eq!(
        blocks_as_written(&repo, ports)[1],
        ("third".to_string(), 24200, "24200-24209".to_string())
    );
    // And prune, which unregisters an attached session long inactive, gives it back too.
    let later = (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339();
    let out = repo
        .cmd_in(&repo.root)
        .env("GIT_SESSION_NOW", &later)
        .args(["prune", "--older-than", "7d"])
        .output()
        .unwrap();
    let out = common::to_run(out).ok();
    assert!(out.stdout.contains("unregistered third"), "{}", out.stdout);
    repo.run(["create", "--attach", "fourth"]).ok();
    assert_eq!(
        blocks_as_written(&repo, ports)[0],
        ("fourth".to_string(), 24200, "24200-24209".to_string())
    );
}
