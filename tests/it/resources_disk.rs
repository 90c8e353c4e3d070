//! `[create] copy` and `[create] link`: a copy costs no disk where the file system can clone
//! (a reflink), and says which it made; a linked directory is the main worktree's own.

use crate::common::{self, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The file system type of `dir` as `stat -f` names it (`ext2/ext3` for ext4, `btrfs`, `xfs`).
fn fs_type(dir: &Path) -> String {
    let out = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn repo_copying(root_setup: impl Fn(&TestRepo)) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".env\nnode_modules\n");
    repo.git(["add", ".gitignore"]);
    repo.git(["commit", "-qm", "ignore"]);
    root_setup(&repo);
    repo
}

#[test]
fn on_a_file_system_without_reflinks_a_copy_says_it_copied() {
    let repo = repo_copying(|r| {
        r.write(".env", "SECRET=main\n");
        r.write(".git-session.toml", "[create]\ncopy = [\".env\"]\n");
    });
    let kind = fs_type(&repo.root);
    if kind != "ext2/ext3" && kind != "tmpfs" {
        eprintln!("!!!! SKIPPED: the temporary directory is on {kind}, not ext4 or tmpfs !!!!");
        return;
    }
    let out = repo.run(["create", "copied"]).ok();
    assert!(
        out.stderr.contains(
            "[create] copy and link: 1 file copied in full (12 bytes; the file system offers no reflink)"
        ),
        "{}",
        out.stderr
    );
    let wt = PathBuf::from(out.stdout.trim_end());
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=main\n"
    );
}

#[test]
fn a_linked_directory_is_the_main_worktrees_and_outlives_the_session() {
    let repo = repo_copying(|r| {
        r.write("node_modules/left-pad/index.js", "module.exports = 1;\n");
        r.write(".git-session.toml", "[create]\nlink = [\"node_modules\"]\n");
    });
    let out = repo.run(["create", "linked"]).ok();
    assert!(
        out.stderr
            .contains("[create] copy and link: linked to the main worktree's: node_modules"),
        "{}",
        out.stderr
    );
    let wt = PathBuf::from(out.stdout.trim_end());
    let link = wt.join("node_modules");
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        repo.root.join("node_modules")
    );
    // The session installs into it: the main worktree sees it, nothing is copied.
    std::fs::write(link.join("installed.txt"), "by the session\n").unwrap();
    assert!(repo.root.join("node_modules/installed.txt").exists());
    // `setup` again leaves the link as it is; cleanup removes the link, not what it points to.
    repo.run(["setup", "linked"]).ok();
    repo.run(["cleanup", "linked"]).ok();
    assert!(!wt.exists());
    assert_eq!(
        std::fs::read_to_string(repo.root.join("node_modules/left-pad/index.js")).unwrap(),
        "module.exports = 1;\n"
    );
}

#[test]
fn a_link_over_what_the_session_has_is_not_made_and_bad_links_are_refused() {
    let repo = repo_copying(|r| {
        r.write("vendor/lib.txt", "tracked\n");
        r.git(["add", "vendor/lib.txt"]);
        r.git(["commit", "-qm", "vendor"]);
        r.write(".git-session.toml", "[create]\nlink = [\"vendor\"]\n");
    });
    let wt = repo.create("has-vendor");
    // A directory linked that git would not ignore as a link is linked, and said so.
    repo.write("cache/x", "x\n");
    repo.write(
        ".git-session.toml",
        "[create]\nlink = [\"vendor\", \"cache\"]\n",
    );
    let out = repo.run(["create", "unignored"]).ok();
    assert!(
        out.stderr.contains("linked cache in ")
            && out.stderr.contains("but git does not ignore the link"),
        "{}",
        out.stderr
    );
    assert!(!std::fs::symlink_metadata(wt.join("vendor"))
        .unwrap()
        .is_symlink());
    repo.write(".git-session.toml", "[create]\nlink = [\"../outside\"]\n");
    let out = repo.run(["create", "bad"]).fails(1);
    assert!(
        out.stderr.contains("bad value for `create.link`"),
        "{}",
        out.stderr
    );
}

/// A loop-mounted file system image, unmounted when dropped.
struct Mounted {
    dir: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}

/// A Btrfs (or else XFS) image of `mkfs` loop-mounted, or why not.
fn mount_reflinking() -> Result<Mounted, String> {
    let (mkfs, size) = if common::installed("mkfs.btrfs") {
        ("mkfs.btrfs", "256M")
    } else if common::installed("mkfs.xfs") {
        ("mkfs.xfs", "320M")
    } else {
        return Err("neither mkfs.btrfs nor mkfs.xfs is installed".into());
    };
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let image = tmp.path().join("fs.img");
    let dir = tmp.path().join("mnt");
    std::fs::create_dir(&dir).map_err(|e| e.to_string())?;
    let run = |cmd: &mut Command| -> Result<(), String> {
        let out = cmd.output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    };
    run(Command::new("truncate").args(["-s", size]).arg(&image))?;
    run(Command::new(mkfs).arg("-q").arg(&image)).map_err(|e| format!("{mkfs}: {e}"))?;
    run(Command::new("mount")
        .args(["-o", "loop"])
        .arg(&image)
        .arg(&dir))
    .map_err(|e| format!("mount -o loop of a {mkfs} image: {e}"))?;
    Ok(Mounted { dir, _tmp: tmp })
}

#[test]
fn on_a_reflink_file_system_a_copy_is_a_clone() {
    let mounted = match mount_reflinking() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("!!!! SKIPPED: no reflink-capable file system to test on: {why} !!!!");
            return;
        }
    };
    let home = mounted.dir.join("home");
    let root = mounted.dir.join("repo");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&root).unwrap();
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        common::hermetic(&mut cmd, &home);
        common::to_run(cmd.args(args).current_dir(&root).output().unwrap()).ok()
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(root.join(".gitignore"), "big.bin\n").unwrap();
    std::fs::write(root.join("big.bin"), vec![7u8; 1 << 20]).unwrap();
    std::fs::write(
        root.join(".git-session.toml"),
        "[create]\ncopy = [\"big.bin\"]\n",
    )
    .unwrap();
    git(&["add", ".gitignore", ".git-session.toml"]);
    git(&["commit", "-qm", "initial"]);
    let mut cmd = Command::new(common::bin());
    common::hermetic(&mut cmd, &home);
    let out = common::to_run(
        cmd.args(["create", "cloned"])
            .current_dir(&root)
            .output()
            .unwrap(),
    )
    .ok();
    assert!(
        out.stderr.contains(
            "[create] copy and link: 1 file cloned copy-on-write (reflink: no disk used until \
             changed)"
        ),
        "on {}: {}",
        fs_type(&mounted.dir),
        out.stderr
    );
    let wt = PathBuf::from(out.stdout.trim_end());
    assert_eq!(
        std::fs::read(wt.join("big.bin")).unwrap(),
        vec![7u8; 1 << 20]
    );
}
