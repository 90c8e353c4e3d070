//! What the tool hands the user's shell runs on BSD userland (macOS): the `shell-init` functions
//! (bash, zsh, fish), the hook files it installs or the block it adds to a hook of the user's
//! own (git runs them with `/bin/sh` on macOS too), and the commands it prints for the user to
//! run, use no tool option that only GNU has (`sed -i`, `readlink -f`, `date -d`, `stat -c`,
//! `grep -P`, `xargs -r`, `cp --reflink`, `sort -V` ...) and no tool macOS lacks (`timeout`).
//!
//! The test of the class is dynamic: real shells run the everyday flow with the real binary and
//! a `PATH` whose first directory holds strict stand-ins ("shims") for the tools whose GNU and
//! BSD forms differ. A shim given a form BSD userland lacks logs the call and exits 2; any other
//! call runs the real tool. Whatever path a script takes, a GNU-only call in it is caught, and
//! the log must stay empty. A static scan of the scripts and of the pinned hints (the same
//! [`RULES`]) covers text no scenario runs.

use crate::common;
use common::TestRepo;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One tool whose GNU and BSD forms differ, and what BSD userland lacks of it.
struct Rule {
    tool: &'static str,
    /// Short options BSD lacks, alone or in a cluster (`-ni` holds `-i`).
    short: &'static str,
    /// Long options BSD lacks, by prefix; `"--"` is every long option (the tool has none there).
    long: &'static [&'static str],
    /// Whole words BSD lacks (find's primaries).
    words: &'static [&'static str],
    /// Not on macOS at all.
    missing: bool,
    why: &'static str,
}

const fn rule(tool: &'static str, short: &'static str, long: &'static [&'static str]) -> Rule {
    Rule {
        tool,
        short,
        long,
        words: &[],
        missing: false,
        why: "",
    }
}

const fn missing(tool: &'static str, why: &'static str) -> Rule {
    Rule {
        missing: true,
        why,
        ..rule(tool, "", &[])
    }
}

const RULES: &[Rule] = &[
    Rule {
        why: "BSD sed has no -r, -z, -s or long options, and its -i takes a suffix argument; \
              use -E, and a temporary file instead of -i",
        ..rule("sed", "irzs", &["--"])
    },
    Rule {
        why: "BSD readlink has no -f, -e or -m before macOS 12.3; use cd -P and pwd -P",
        ..rule("readlink", "fem", &["--"])
    },
    Rule {
        why: "BSD date parses with -j -f, not -d, and has no long options; date +%s is portable",
        ..rule("date", "d", &["--"])
    },
    Rule {
        why: "BSD stat formats with -f, GNU stat with -c: neither form is portable",
        ..rule("stat", "c", &["--"])
    },
    Rule {
        why: "BSD grep has no Perl regular expressions; use -E",
        ..rule("grep", "P", &["--perl-regexp"])
    },
    Rule {
        why: "BSD xargs has no -d, -a or long options, and -r only on recent releases",
        ..rule("xargs", "rda", &["--"])
    },
    Rule {
        words: &[
            "-printf",
            "-fprintf",
            "-regextype",
            "-readable",
            "-writable",
            "-executable",
        ],
        why: "BSD find has no -printf, -regextype, -readable, -writable or -executable",
        ..rule("find", "", &[])
    },
    Rule {
        why: "BSD mktemp has no long options (--tmpdir, --suffix), and -p only on recent macOS; \
              give a template ending in XXXXXX",
        ..rule("mktemp", "p", &["--"])
    },
    Rule {
        why: "sort -V (version order) is GNU's",
        ..rule("sort", "V", &["--version-sort"])
    },
    Rule {
        why: "BSD cp has no long options (--reflink, --parents) and no -t, -T, -u, -d or -b",
        ..rule("cp", "tTudb", &["--"])
    },
    Rule {
        why: "BSD base64 wraps with -b and decodes with -D (-d only from macOS 13); --decode is \
              the spelling both take",
        ..rule("base64", "wd", &["--wrap"])
    },
    missing(
        "realpath",
        "macOS has no realpath before 13; use cd -P and pwd -P",
    ),
    missing("timeout", "macOS has no timeout"),
    missing("tac", "macOS has no tac; tail -r reverses"),
    missing("nproc", "macOS has no nproc; sysctl -n hw.ncpu answers"),
];

/// Whether `args` (after the tool's name) use what BSD userland lacks, by `rule`.
fn offends(rule: &Rule, args: &[&str]) -> bool {
    if rule.missing {
        return true;
    }
    for arg in args.iter().take_while(|a| **a != "--") {
        if rule.words.contains(arg) {
            return true;
        }
        if arg.len() > 2 && arg.starts_with("--") {
            if rule.long.iter().any(|p| *p == "--" || arg.starts_with(p)) {
                return true;
            }
        } else if let Some(cluster) = arg.strip_prefix('-') {
            if cluster.chars().any(|c| rule.short.contains(c)) {
                return true;
            }
        }
    }
    false
}

/// The shims' directory and the two logs: the calls refused, and the calls passed on.
struct Shims {
    dir: PathBuf,
    complaints: PathBuf,
    calls: PathBuf,
}

/// `path` to the real tool, searched on this process's `PATH`.
fn real(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

fn single_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The sh `case` pattern of what `rule` refuses (the same test as [`offends`]).
fn case_pattern(rule: &Rule) -> Option<String> {
    let mut alternatives: Vec<String> = rule.words.iter().map(|w| w.to_string()).collect();
    for prefix in rule.long {
        alternatives.push(if *prefix == "--" {
            "--?*".to_string()
        } else {
            format!("{prefix}*")
        });
    }
    if !rule.short.is_empty() {
        let set = format!("[{}]", rule.short);
        alternatives.push(format!("-{set}*"));
        alternatives.push(format!("-[!-]*{set}*"));
    }
    (!alternatives.is_empty()).then(|| alternatives.join("|"))
}

/// Writes a shim for every rule into `base/shims`: written in sh with builtins only, so that it
/// needs none of the tools it stands in for.
fn shims(base: &Path) -> Shims {
    use std::os::unix::fs::PermissionsExt;
    let dir = base.join("shims");
    std::fs::create_dir_all(&dir).unwrap();
    let complaints = base.join("shim-complaints.log");
    let calls = base.join("shim-calls.log");
    for rule in RULES {
        let complain = format!(
            "printf '%s\\n' \"{} $*: {}\" >>{}; exit 2",
            rule.tool,
            rule.why,
            single_quoted(&complaints.display().to_string())
        );
        let mut text = format!("#!/bin/sh\n# A strict stand-in for {}.\n", rule.tool);
        if rule.missing {
            text.push_str(&format!("{complain}\n"));
        } else {
            if let Some(pattern) = case_pattern(rule) {
                text.push_str(&format!(
                    "for gs_arg do\n  case $gs_arg in\n    --) break ;;\n    {pattern}) \
                     {complain} ;;\n  esac\ndone\n"
                ));
            }
            text.push_str(&match real(rule.tool) {
                Some(real) => format!(
                    "printf '%s\\n' \"{} $*\" >>{}\nexec {} \"$@\"\n",
                    rule.tool,
                    single_quoted(&calls.display().to_string()),
                    single_quoted(&real.display().to_string())
                ),
                // Not installed here: a call fails as it would without the shim.
                None => format!("echo '{}: not installed' >&2; exit 127\n", rule.tool),
            });
        }
        let path = dir.join(rule.tool);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Shims {
        dir,
        complaints,
        calls,
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl Shims {
    /// `cmd`, hermetic, with the shims first on its `PATH` (then the binary's directory).
    fn command(&self, repo: &TestRepo, program: &str) -> Command {
        let mut cmd = Command::new(program);
        common::hermetic(&mut cmd, &repo.home);
        let path = format!(
            "{}:{}:{}",
            self.dir.display(),
            common::bin().parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("PATH", path);
        cmd
    }
}

#[test]
fn the_shims_refuse_what_bsd_lacks_and_pass_the_rest_on() {
    let repo = TestRepo::new();
    let shims = shims(&repo.base());
    let file = repo.base().join("f.txt");
    std::fs::write(&file, "a\n").unwrap();
    let f = file.display().to_string();
    let refused: &[&[&str]] = &[
        &["sed", "-i", "s/a/b/", &f],
        &["sed", "-ni", "p", &f],
        &["sed", "-r", "s/a/b/", &f],
        &["readlink", "-f", &f],
        &["date", "-d", "yesterday"],
        &["date", "--iso-8601"],
        &["stat", "-c", "%s", &f],
        &["grep", "-P", "a", &f],
        &["xargs", "-r", "echo"],
        &["find", &f, "-printf", "%p"],
        &["mktemp", "--tmpdir", "x.XXXXXX"],
        &["sort", "-V", &f],
        &["cp", "--reflink=auto", &f, &f],
        &["base64", "-w", "0", &f],
        &["timeout", "1", "true"],
    ];
    for call in refused {
        let out = shims
            .command(&repo, call[0])
            .args(&call[1..])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{call:?} was let through");
        let rule = RULES.iter().find(|r| r.tool == call[0]).unwrap();
        assert!(offends(rule, &call[1..]), "the static rule misses {call:?}");
    }
    assert_eq!(read(&shims.complaints).lines().count(), refused.len());
    assert_eq!(read(&shims.calls), "", "a refused call ran the real tool");
    let passed: &[&[&str]] = &[
        &["sed", "-n", "-E", "s/a/b/p", &f],
        &["date", "+%s"],
        &["date", "-u", "+%Y"],
        &["grep", "-E", "a|b", &f],
        &["sort", "-r", &f],
        &["find", &f, "-type", "f", "-name", "f.txt"],
        &[
            "mktemp",
            "-d",
            &format!("{}/d.XXXXXX", repo.base().display()),
        ],
        &["readlink", &f],
    ];
    for call in passed {
        let out = shims
            .command(&repo, call[0])
            .args(&call[1..])
            .output()
            .unwrap();
        let rule = RULES.iter().find(|r| r.tool == call[0]).unwrap();
        assert!(
            !offends(rule, &call[1..]),
            "the static rule refuses {call:?}"
        );
        // readlink of a plain file answers 1 (not a link): still the real tool's answer.
        assert_ne!(out.status.code(), Some(2), "{call:?}: {out:?}");
    }
    assert_eq!(read(&shims.complaints).lines().count(), refused.len());
    assert_eq!(read(&shims.calls).lines().count(), passed.len());
}

mod scan;
mod shells;
