//! The shell integration hands a session's leased resources to the shell it moves: `create`
//! and `switch` export `GIT_SESSION_PORT`, `GIT_SESSION_PORTS` and `GIT_SESSION_<NAME>` in bash,
//! zsh and fish, and a session without resources exports nothing.

use crate::common;
use common::{hermetic, TestRepo};
use std::process::Command;

/// `preferred`: each shell's test its own range. The three run at once, and a port another
/// test's `create` probes at that instant looks busy to this one's (a CI run saw zsh's `web`
/// pass over 26000-26001 while bash and fish leased in the same range).
fn in_shell(name: &str, init: &str, preferred: u16) {
    if !common::installed(name) {
        eprintln!("!!!! SKIPPED resources_shell ({name}): {name} is not installed");
        return;
    }
    let ports = common::free_ports(preferred, 100);
    let repo = TestRepo::new();
    repo.write(
        ".git-session.toml",
        &format!(
            "[resources]\nports = 2\nport_range = \"{}\"\n\
             [resources.names]\ndatabase = \"app_{{label}}\"\n",
            ports.range()
        ),
    );
    let script = format!(
        "{init}\n\
         git session create web > /dev/null\n\
         echo \"WEB=$GIT_SESSION_PORT $GIT_SESSION_PORTS $GIT_SESSION_DATABASE\"\n\
         git-session create api > /dev/null\n\
         echo \"API=$GIT_SESSION_PORT $GIT_SESSION_DATABASE $PWD\"\n\
         git session switch web > /dev/null\n\
         echo \"BACK=$GIT_SESSION_PORT $GIT_SESSION_DATABASE $PWD\"\n"
    );
    let mut cmd = Command::new(name);
    hermetic(&mut cmd, &repo.home);
    let out = common::to_run(
        cmd.current_dir(&repo.root)
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap(),
    )
    .ok();
    let web = repo.sessions_dir().join("web").display().to_string();
    let api = repo.sessions_dir().join("api").display().to_string();
    assert_eq!(
        ports.unshift(&out.stdout),
        format!(
            "WEB={p} {p}-{p1} app_web\nAPI={p2} app_api {api}\n\
             BACK={p} app_web {web}\n",
            p = preferred,
            p1 = preferred + 1,
            p2 = preferred + 2,
        ),
        "{name}: {}",
        out.stderr
    );
}

#[test]
fn bash_gets_the_resources_of_the_session_it_enters() {
    in_shell("bash", "eval \"$(git session shell-init bash)\"", 26000);
}

#[test]
fn zsh_gets_the_resources_of_the_session_it_enters() {
    in_shell("zsh", "eval \"$(git session shell-init zsh)\"", 26100);
}

#[test]
fn fish_gets_the_resources_of_the_session_it_enters() {
    in_shell("fish", "git session shell-init fish | source", 26200);
}
