//! A tmux server of a test's own (its socket in the test's HOME), hermetic like every run: for
//! what needs a terminal (`list --watch`, an agent's interactive prompts).

use super::hermetic;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Tmux {
    socket: PathBuf,
    home: PathBuf,
}

impl Tmux {
    /// Starts `sh -c script` in `dir` in a detached window `w` of `cols` x `rows`.
    pub fn start(home: &Path, dir: &Path, cols: u16, rows: u16, script: &str) -> Tmux {
        let tmux = Tmux {
            socket: home.join("tmux.sock"),
            home: home.to_path_buf(),
        };
        let started = tmux
            .cmd()
            .args(["new-session", "-d", "-s", "w", "-x"])
            .arg(cols.to_string())
            .arg("-y")
            .arg(rows.to_string())
            .arg("-c")
            .arg(dir)
            .args(["sh", "-c", script])
            .output()
            .unwrap();
        assert!(started.status.success(), "{started:?}");
        tmux
    }

    pub fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        hermetic(&mut c, &self.home);
        c.arg("-S").arg(&self.socket);
        c
    }

    /// What the window shows now.
    pub fn pane(&self) -> String {
        let out = self
            .cmd()
            .args(["capture-pane", "-p", "-t", "w"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Types `keys` (tmux key names, e.g. `Enter`, `C-c`, or literal text with `literal`).
    pub fn keys(&self, keys: &[&str], literal: bool) {
        let mut c = self.cmd();
        c.args(["send-keys", "-t", "w"]);
        if literal {
            c.arg("-l");
        }
        let sent = c.args(keys).output().unwrap();
        assert!(sent.status.success(), "{sent:?}");
    }

    /// Waits until the window shows `needle`, for at most `limit`; the screen at that moment.
    pub fn until_within(&self, what: &str, needle: &str, limit: Duration) -> String {
        let started = Instant::now();
        loop {
            let pane = self.pane();
            if pane.contains(needle) {
                return pane;
            }
            assert!(
                started.elapsed() < limit,
                "{what}: no {needle:?} on the screen:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn until(&self, what: &str, needle: &str) -> String {
        self.until_within(what, needle, Duration::from_secs(30))
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").output();
    }
}
