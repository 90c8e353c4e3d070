//! Issue 11 item 1: nothing on disk can crash the tool. Real files written by git (the index in
//! every version and with every extension git writes here) and by the tool (claims.index) get
//! each count or length field set to 0, 1, a huge value, 0xFFFFFFFF and random values; the guard
//! (`git commit` with the hook, `guard pre-commit` on the damaged index), `list` and `info` must
//! never crash (exit 101/134, a signal) nor hang, and the guard must never refuse because of it.
use crate::common;
use common::{within, Run, TestRepo};
use std::path::{Path, PathBuf};

/// Exit codes that mean a crash: a Rust panic (101), an abort (134), killed by a signal or by
/// the hang timeout (-1, -9).
fn crashed(run: &Run) -> bool {
    matches!(run.code, 101 | 134 | -1 | -9) || run.stderr.contains("panicked at")
}

/// A small deterministic generator (xorshift), so a failure names its seed and reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A field of an index file that holds a count or a length.
#[derive(Debug, Clone)]
enum Field {
    /// A big-endian u32 at this offset.
    Be32(usize),
    /// A big-endian u16 (an entry's flags, whose low 12 bits are its path length).
    Be16(usize),
    /// The `<entries> <subtrees>` line of the cache tree's root node, inside the TREE extension
    /// starting at this offset (ASCII numbers; the extension's length is fixed up).
    TreeLine(usize, bool),
}

/// Offsets of the header count, the first entry's flags, each extension's length and the
/// cache tree's root counts.
fn fields(data: &[u8]) -> Vec<Field> {
    let be32 = |at: usize| u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let version = be32(4);
    let count = be32(8);
    let mut out = vec![Field::Be32(8)];
    let mut at = 12;
    let mut previous_len = 0;
    for i in 0..count {
        let flags = u16::from_be_bytes([data[at + 60], data[at + 61]]);
        if i == 0 {
            out.push(Field::Be16(at + 60));
        }
        let fixed = if flags & 0x4000 != 0 { 64 } else { 62 };
        if version == 4 {
            let mut p = at + fixed;
            while data[p] & 0x80 != 0 {
                p += 1;
            }
            p += 1;
            let nul = data[p..].iter().position(|&b| b == 0).unwrap();
            previous_len += nul;
            at = p + nul + 1;
        } else {
            let len = (flags & 0xfff) as usize;
            at += (fixed + len + 8) & !7;
        }
    }
    let _ = previous_len;
    while at + 8 <= data.len() - 20 {
        out.push(Field::Be32(at + 4));
        if &data[at..at + 4] == b"TREE" {
            out.push(Field::TreeLine(at, false));
            out.push(Field::TreeLine(at, true));
        }
        at += 8 + be32(at + 4);
    }
    out
}

/// Recomputes the trailing SHA-1, so the damage reaches the decoders rather than the checksum.
fn reseal(data: &mut Vec<u8>) {
    let body = data[..data.len() - 20].to_vec();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body");
    std::fs::write(&file, &body).unwrap();
    let out = std::process::Command::new("sha1sum")
        .arg(&file)
        .output()
        .unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    let sum: Vec<u8> = (0..20)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    data.truncate(data.len() - 20);
    data.extend_from_slice(&sum);
}

/// `data` with `field` set to `value` (the ASCII tree counts get its decimal text).
fn mutate(data: &[u8], field: &Field, value: u64) -> Vec<u8> {
    let mut out = data.to_vec();
    match *field {
        Field::Be32(at) => out[at..at + 4].copy_from_slice(&(value as u32).to_be_bytes()),
        Field::Be16(at) => {
            let flags = u16::from_be_bytes([out[at], out[at + 1]]);
            let v = (flags & 0xf000) | (value as u16 & 0x0fff);
            out[at..at + 2].copy_from_slice(&v.to_be_bytes());
        }
        Field::TreeLine(at, subtrees) => {
            let len = u32::from_be_bytes(out[at + 4..at + 8].try_into().unwrap()) as usize;
            let body = &data[at + 8..at + 8 + len];
            let nl = body.iter().position(|&b| b == b'\n').unwrap();
            let line = std::str::from_utf8(&body[1..nl]).unwrap();
            let (entries, subs) = line.split_once(' ').unwrap();
            let text = if subtrees {
                format!("{entries} {value}")
            } else {
                format!("{} {subs}", value as i64 as i32)
            };
            let mut new_body = vec![0u8];
            new_body.extend_from_slice(text.as_bytes());
            new_body.extend_from_slice(&body[nl..]);
            out.splice(at + 8..at + 8 + len, new_body.iter().copied());
            out[at + 4..at + 8].copy_from_slice(&(new_body.len() as u32).to_be_bytes());
        }
    }
    out
}

/// A repository with nested directories, a session `a` with staged and unstaged changes in its
/// worktree, the hooks installed.
fn fixture() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    for (i, rel) in ["src/a.rs", "src/deep/b/c.rs", "docs/x.md", "z.txt"]
        .iter()
        .enumerate()
    {
        repo.write(rel, &format!("{i}\n"));
    }
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "tree"]);
    repo.run(["hooks", "install"]).ok();
    let wt = repo.create("a");
    common::write_in(&wt, "src/a.rs", "changed\n");
    common::write_in(&wt, "new.txt", "new\n");
    repo.git_in(&wt, ["add", "new.txt"]);
    common::write_in(&wt, "src/deep/b/c.rs", "unstaged\n");
    (repo, wt)
}

fn git_path(repo: &TestRepo, dir: &Path, what: &str) -> PathBuf {
    let p = repo.git_in(
        dir,
        ["rev-parse", "--path-format=absolute", "--git-path", what],
    );
    PathBuf::from(p.trim())
}

/// Every index shape git writes here: versions 2, 3 (an intent-to-add entry), 4, each with a
/// fresh cache tree; the untracked cache; EOIE/IEOT; a split index.
fn shapes(repo: &TestRepo, wt: &Path) -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    let _ = (repo, wt);
    vec![
        ("v2", vec![("--index-version", "2")]),
        ("v3", vec![("--index-version", "3")]),
        ("v4", vec![("--index-version", "4")]),
        ("untracked-cache", vec![("--untracked-cache", "")]),
        ("eoie-ieot", vec![]),
        ("split", vec![("--split-index", "")]),
    ]
}

#[test]
fn every_count_field_of_every_index_shape_never_crashes() {
    let (repo, wt) = fixture();
    let index = git_path(&repo, &wt, "index");
    let seeds = std::env::var("GIT_SESSION_ROBUST_RANDOM")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2u64);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    for (shape, flags) in shapes(&repo, &wt) {
        if shape == "v3" {
            common::write_in(&wt, "ita.txt", "x\n");
            repo.git_in(&wt, ["add", "-N", "ita.txt"]);
        }
        if shape == "eoie-ieot" {
            repo.git_in(&wt, ["config", "index.recordEndOfIndexEntries", "true"]);
            repo.git_in(&wt, ["config", "index.recordOffsetTable", "true"]);
            repo.git_in(&wt, ["config", "index.threads", "2"]);
            repo.git_in(&wt, ["update-index", "--index-version", "2"]);
        }
        for (flag, value) in &flags {
            let mut args = vec!["update-index", flag];
            if !value.is_empty() {
                args.push(value);
            }
            repo.git_in(&wt, args);
        }
        repo.git_in(&wt, ["write-tree"]);
        repo.git_in(&wt, ["status", "--porcelain"]);
        let pristine = std::fs::read(&index).unwrap();
        let mut values: Vec<u64> = vec![0, 1, 0xffff, 0x7fff_ffff, 0xffff_ffff];
        values.extend((0..seeds).map(|_| rng.next()));
        for field in fields(&pristine) {
            for &value in &values {
                let mut bad = mutate(&pristine, &field, value);
                reseal(&mut bad);
                std::fs::write(&index, &bad).unwrap();
                let what = format!("{shape} {field:?} = {value:#x}");
                let mut guard = repo.cmd_in(&wt);
                guard.args(["guard", "pre-commit"]);
                let g = within(guard, 20, "");
                assert!(!crashed(&g), "guard crashed on {what}: {g:?}");
                assert_eq!(g.code, 0, "guard refused on {what}: {g:?}");
                for args in [&["list"][..], &["info", "a"][..]] {
                    let mut cmd = repo.cmd_in(&repo.root);
                    cmd.args(args);
                    let r = within(cmd, 20, "");
                    assert!(!crashed(&r), "{args:?} crashed on {what}: {r:?}");
                }
                runs += 1;
            }
        }
        std::fs::write(&index, &pristine).unwrap();
    }
    assert!(runs > 100, "only {runs} mutations ran");
}

/// A cache tree nested far deeper than any real one, and one whose root claims 0xFFFFFFFF
/// subtrees: read without exhausting the stack or allocating from the count.
#[test]
fn a_deep_or_huge_cache_tree_never_crashes() {
    let (repo, wt) = fixture();
    let index = git_path(&repo, &wt, "index");
    repo.git_in(&wt, ["write-tree"]);
    let pristine = std::fs::read(&index).unwrap();
    let tree_at = fields(&pristine)
        .into_iter()
        .find_map(|f| match f {
            Field::TreeLine(at, _) => Some(at),
            _ => None,
        })
        .expect("git wrote a cache tree");
    let len = u32::from_be_bytes(pristine[tree_at + 4..tree_at + 8].try_into().unwrap()) as usize;
    let mut deep = Vec::new();
    for _ in 0..200_000 {
        deep.extend_from_slice(b"d\0-1 1\n");
    }
    deep.extend_from_slice(b"d\0-1 0\n");
    deep[0] = 0; // the root's name is empty
    deep.remove(0);
    for body in [deep, b"\x004 4294967295\n".to_vec()] {
        let mut bad = pristine[..tree_at + 4].to_vec();
        bad.extend_from_slice(&(body.len() as u32).to_be_bytes());
        bad.extend_from_slice(&body);
        bad.extend_from_slice(&pristine[tree_at + 8 + len..]);
        reseal(&mut bad);
        std::fs::write(&index, &bad).unwrap();
        let mut guard = repo.cmd_in(&wt);
        guard.args(["guard", "pre-commit"]);
        let g = within(guard, 30, "");
        assert!(!crashed(&g) && g.code == 0, "guard: {g:?}");
        let mut list = repo.cmd_in(&repo.root);
        list.arg("list");
        let r = within(list, 30, "");
        assert!(!crashed(&r), "list: {r:?}");
    }
}

/// The derived claims index with each header count (sessions, claims, front bytes) set to
/// 0, 1, huge and random values, and its claim lines scrambled: a commit of an unowned file
/// goes through, a commit of another session's file is still refused (the index was rebuilt,
/// not trusted and not a reason to fail open), and the file is whole again afterwards.
#[test]
fn a_damaged_claims_index_is_rebuilt_never_a_crash_or_a_refusal() {
    let (repo, wt) = fixture();
    repo.git_in(&wt, ["commit", "-q", "-m", "a's work"]);
    let path = repo.store().join("claims.index");
    let root = repo.root.clone();
    // Builds the index (a commit claim of a's on src/a.rs and new.txt).
    repo.run(["list"]).ok();
    let mut rng = Rng(7);
    let mut n = 0u32;
    let values: Vec<String> = ["0", "1", "18446744073709551615", "4294967295", "-1", "x"]
        .iter()
        .map(|s| s.to_string())
        .chain((0..4).map(|_| rng.next().to_string()))
        .collect();
    for field in 0..3 {
        for value in &values {
            let pristine = std::fs::read(&path).expect("the claims index exists");
            let nl = pristine.iter().position(|&b| b == b'\n').unwrap();
            let header = std::str::from_utf8(&pristine[..nl]).unwrap();
            let mut words: Vec<&str> = header.split(' ').collect();
            // After the four words of "git-session claims index vN": sessions, claims, bytes.
            let at = 4 + field;
            words[at] = value;
            let mut bad = words.join(" ").into_bytes();
            bad.extend_from_slice(&pristine[nl..]);
            std::fs::write(&path, &bad).unwrap();
            n += 1;
            let file = format!("free{n}.txt");
            common::write_in(&root, &file, "x\n");
            repo.git(["add", &file]);
            let ok = repo.git_try(&root, ["commit", "-q", "-m", "free"]);
            assert!(
                ok.code == 0,
                "commit refused with header word {at} = {value}: {ok:?}"
            );
            common::write_in(&root, "new.txt", "mine\n");
            repo.git(["add", "new.txt"]);
            let refused = repo.git_try(&root, ["commit", "-q", "-m", "steal"]);
            assert_eq!(refused.code, 1, "not refused after damage: {refused:?}");
            repo.git(["reset", "-q", "--", "new.txt"]);
            std::fs::remove_file(root.join("new.txt")).unwrap();
        }
    }
    // The last block of claim lines, at the end, scrambled: found when the guard reads it, and
    // the guard answers again from a rebuilt index.
    let mut bad = std::fs::read(&path).unwrap();
    let len = bad.len();
    for b in &mut bad[len.saturating_sub(8)..] {
        *b = rng.next() as u8;
    }
    std::fs::write(&path, &bad).unwrap();
    common::write_in(&root, "new.txt", "mine\n");
    repo.git(["add", "new.txt"]);
    assert_eq!(repo.git_try(&root, ["commit", "-q", "-m", "steal"]).code, 1);
}

/// The class: a file git-session reads itself from git's directories or a worktree (an admin
/// entry's `gitdir`, `locked` or `HEAD`, a worktree's `.git` file, `.gitmodules`, `MERGE_HEAD`,
/// the guard's marker, a hook) may be a FIFO with no writer. Reading one must never block:
/// every command finishes, and the guard still lets the commit through. (Files only libgit2 or
/// git itself read, such as a worktree's `HEAD` or index, are git's: `git status` blocks on
/// those too.)
#[test]
fn no_command_hangs_on_a_fifo_where_git_keeps_a_small_file() {
    let fifo = |p: &Path| {
        let _ = std::fs::remove_file(p);
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap();
        assert!(ok.success(), "mkfifo {}", p.display());
    };
    type Plant = fn(&TestRepo, &Path) -> PathBuf;
    let places: [(&str, Plant); 9] = [
        ("a session's admin `locked`", |r, _| {
            r.root.join(".git/worktrees/s/locked")
        }),
        ("another entry's `gitdir`", |r, _| {
            std::fs::create_dir_all(r.root.join(".git/worktrees/junk")).unwrap();
            r.root.join(".git/worktrees/junk/gitdir")
        }),
        ("another entry's `locked`", |r, _| {
            let junk = r.root.join(".git/worktrees/junk");
            std::fs::create_dir_all(&junk).unwrap();
            std::fs::write(junk.join("gitdir"), "/nonexistent/junk/.git\n").unwrap();
            junk.join("locked")
        }),
        ("another entry's `HEAD`", |r, _| {
            let junk = r.root.join(".git/worktrees/junk");
            std::fs::create_dir_all(&junk).unwrap();
            std::fs::write(junk.join("gitdir"), "/nonexistent/junk/.git\n").unwrap();
            junk.join("HEAD")
        }),
        ("a session worktree's `.gitmodules`", |_, wt| {
            wt.join(".gitmodules")
        }),
        ("`.git` in a directory a session names", |r, _| {
            let gone = r.sessions_dir().join("gone");
            std::fs::create_dir_all(&gone).unwrap();
            std::fs::write(
                r.store().join("sessions/gone.toml"),
                format!(
                    "version = 1\nlabel = \"gone\"\nbranch = \"session/gone\"\npath = \"{}\"\n\
                     base = \"main\"\nbase_commit = \"\"\nstate = \"active\"\n\
                     created = \"2026-01-01T00:00:00Z\"\nlast_seen = \"2026-01-01T00:00:00Z\"\n",
                    gone.display()
                ),
            )
            .unwrap();
            gone.join(".git")
        }),
        ("`MERGE_HEAD`", |r, _| r.root.join(".git/MERGE_HEAD")),
        ("the guard's marker", |r, _| {
            r.root.join(".git/git-session-guard")
        }),
        ("the pre-commit hook", |r, _| {
            r.root.join(".git/hooks/pre-commit")
        }),
    ];
    for (what, plant) in places {
        let repo = TestRepo::new();
        let wt = repo.create("s");
        fifo(&plant(&repo, &wt));
        let runs: [&[&str]; 7] = [
            &["list", "--json"],
            &["info", "s"],
            &["prune", "--dry-run"],
            &["create", "t"],
            &["guard", "pre-commit"],
            &["guard", "post-commit"],
            &["hooks", "install"],
        ];
        for args in runs {
            let mut cmd = repo.cmd_in(&repo.root);
            cmd.args(args);
            let out = within(cmd, 20, "");
            assert!(
                !crashed(&out),
                "{what}: {args:?} hung or crashed: {}",
                out.stderr
            );
            match args[0] {
                "guard" => assert_eq!(out.code, 0, "{what}: {args:?}: {}", out.stderr),
                // git itself waits on such a file while it adds a worktree: a clear refusal.
                "create" if out.code != 0 => assert!(
                    out.stderr
                        .contains("is not a regular file, and git reads it")
                        && out.stderr.contains("hint: "),
                    "{what}: {}",
                    out.stderr
                ),
                _ => {}
            }
        }
    }
}
