//! Every command block of README.md and docs/*.md runs as written, in bash, in a fresh
//! temporary repository, with the real binary.
//!
//! A block is a fenced block whose info string is `sh`, `bash`, `shell` or `console`; a file
//! added to docs/ later is picked up by the glob. How a block is run is said in the markdown
//! itself, by an HTML comment on the line just before its fence, so a reader of the source sees
//! it too:
//!
//! - none: the block runs in the main worktree of a new repository (`main`, one commit of
//!   `README.md`), under `set -eu`, and must exit 0;
//! - `<!-- run after: SHELL -->`: SHELL runs first, in the same shell (so a `cd` there holds),
//!   and must succeed; then the block;
//! - `<!-- the user's own file -->` before a ```toml block: checked as the user's configuration
//!   file (docs_config), not the repository's.
//! - `<!-- not run: REASON -->`: the block is not run, and the reason is printed and pinned
//!   (snapshot `docs_blocks__not_run`), so a new exception shows in review.
//!
//! A `console` block is a transcript: each `$ ` line is a command, the lines up to the next one
//! are what it prints (stdout and stderr together), compared exactly after the one
//! normalisation a reader would not notice: every RFC 3339 time becomes `<time>` on both sides.
//! Its commands may fail (a refusal is what some blocks show); the output must match.
//!
//! Agents cannot run here (no network, no account): `claude`, `codex` and `gemini` on `PATH`
//! are a stand-in ([`stub_agents`]) that records how it was started and then does what a small
//! agent task does in a session: edits and commits `login.txt`.

use crate::common;
use common::{hermetic, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;

const RUN_LANGS: [&str; 4] = ["sh", "bash", "shell", "console"];

#[derive(Debug, Clone, PartialEq)]
pub enum How {
    Run,
    RunAfter(String),
    NotRun(String),
    /// `<!-- the user's own file -->` before a ```toml block: it belongs in the user's
    /// configuration file, and is checked there (some keys a repository's file may not set).
    UserFile,
}

#[derive(Debug, Clone)]
pub struct Block {
    /// Repository-relative file name.
    pub file: String,
    /// 1-based line of the opening fence.
    pub line: usize,
    pub lang: String,
    pub text: String,
    pub how: How,
}

/// README.md and every docs/*.md, in a stable order.
pub fn doc_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let mut files = vec![root.join("README.md")];
    files.extend(docs);
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .display()
        .to_string()
}

/// Every fenced block of `text` (any language), with the directive before it. An HTML comment
/// just before a fence that is no known directive is an error: a typo must not turn a block's
/// run off.
pub fn blocks_of(file: &str, text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let lang = info.trim().to_string();
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push(lines[i]);
            i += 1;
        }
        assert!(
            i < lines.len(),
            "{file}:{}: a block that never ends",
            start + 1
        );
        i += 1;
        let before = start.checked_sub(1).map(|b| lines[b].trim()).unwrap_or("");
        let how = directive(before).unwrap_or_else(|bad| {
            panic!("{file}:{start}: {bad:?} is no directive (`<!-- not run: WHY -->` or `<!-- run after: SHELL -->`)")
        });
        out.push(Block {
            file: file.to_string(),
            line: start + 1,
            lang,
            text: body.join("\n") + "\n",
            how,
        });
    }
    out
}

fn directive(line: &str) -> Result<How, String> {
    let Some(inner) = line
        .strip_prefix("<!--")
        .and_then(|l| l.strip_suffix("-->"))
    else {
        return Ok(How::Run);
    };
    let inner = inner.trim();
    if let Some(why) = inner.strip_prefix("not run:") {
        if !why.trim().is_empty() {
            return Ok(How::NotRun(why.trim().to_string()));
        }
    }
    if inner == "the user's own file" {
        return Ok(How::UserFile);
    }
    if let Some(setup) = inner.strip_prefix("run after:") {
        if !setup.trim().is_empty() {
            return Ok(How::RunAfter(setup.trim().to_string()));
        }
    }
    Err(line.to_string())
}

/// Every block of README.md and docs/*.md that holds commands.
pub fn command_blocks() -> Vec<Block> {
    doc_files()
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            blocks_of(&relative(path), &text)
        })
        .filter(|b| RUN_LANGS.contains(&b.lang.as_str()))
        .collect()
}

/// A directory of stand-ins for the agent CLIs: each appends `NAME ARGS | PWD | GIT_SESSION`
/// to `$HOME/agents.log`, then edits and commits `login.txt` as an agent's small task would.
pub fn stub_agents(home: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = home.join("agent-stubs");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["claude", "codex", "gemini"] {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\n\
                 printf '%s\\n' \"{name} $* | $PWD | ${{GIT_SESSION-}}\" >> \"$HOME/agents.log\"\n\
                 echo fixed > login.txt && git add login.txt && git commit -qm \"Fix the login\"\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

/// bash, hermetic, in `repo`'s main worktree, with the agent stand-ins first on `PATH`.
pub fn bash(repo: &TestRepo, script: &str) -> common::Run {
    let stubs = stub_agents(&repo.home);
    let mut cmd = Command::new("bash");
    hermetic(&mut cmd, &repo.home);
    let path = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v)
        .map(|v| v.to_string_lossy().into_owned())
        .unwrap();
    cmd.env("PATH", format!("{}:{path}", stubs.display()))
        .current_dir(&repo.root)
        .arg("-c")
        .arg(script);
    common::to_run(cmd.output().unwrap())
}

/// Every RFC 3339 UTC time (`2026-01-01T00:00:00Z`, with or without fractions) as `<time>`.
fn times_out(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let shape = b"dddd-dd-ddTdd:dd:dd";
    while i < b.len() {
        let fits = i + shape.len() <= b.len()
            && shape.iter().zip(&b[i..]).all(|(s, c)| match s {
                b'd' => c.is_ascii_digit(),
                s => s == c,
            });
        if !fits {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        let mut j = i + shape.len();
        if b.get(j) == Some(&b'.') {
            j += 1;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
        }
        if b.get(j) == Some(&b'Z') {
            j += 1;
        }
        out.push_str("<time>");
        i = j;
    }
    out
}

/// Lines without trailing blanks, and without blank lines at either end.
fn tidy(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = times_out(text)
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    while lines.first().is_some_and(String::is_empty) {
        lines.remove(0);
    }
    lines
}

/// A console transcript's commands, each with the lines it is shown to print.
fn transcript(text: &str) -> Vec<(String, String)> {
    let mut steps: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        match line.strip_prefix("$ ") {
            Some(command) => steps.push((command.to_string(), String::new())),
            None => {
                let (_, shown) = steps
                    .last_mut()
                    .expect("a console block starts with a `$ ` command");
                shown.push_str(line);
                shown.push('\n');
            }
        }
    }
    steps
}

const MARK: &str = "@@docs-block-step@@";

/// Runs one block; `Err` says how it failed.
pub fn run_block(block: &Block) -> Result<(), String> {
    let repo = TestRepo::new();
    let setup = match &block.how {
        How::NotRun(_) => return Ok(()),
        How::Run | How::UserFile => String::new(),
        How::RunAfter(setup) => format!("{setup}\n"),
    };
    if block.lang != "console" {
        let run = bash(&repo, &format!("set -eu\n{setup}{}", block.text));
        return match run.code {
            0 => Ok(()),
            code => Err(format!(
                "exit {code}\nstdout:\n{}\nstderr:\n{}",
                run.stdout, run.stderr
            )),
        };
    }
    let steps = transcript(&block.text);
    let mut script = format!("set -e\n{setup}set +e\nexec 2>&1\n");
    for (command, _) in &steps {
        script.push_str(&format!("printf '\\n{MARK}\\n'\n{command}\n"));
    }
    let run = bash(&repo, &script);
    let Some((_, outputs)) = run.stdout.split_once(MARK) else {
        return Err(format!(
            "the setup failed (exit {})\nstdout:\n{}\nstderr:\n{}",
            run.code, run.stdout, run.stderr
        ));
    };
    let outputs: Vec<&str> = outputs.split(MARK).collect();
    let mut problems = String::new();
    for ((command, shown), got) in steps.iter().zip(&outputs) {
        let got = got.replace(&repo.base().display().to_string(), "~/src");
        if tidy(shown) != tidy(&got) {
            problems.push_str(&format!(
                "$ {command}\n--- the block shows:\n{shown}--- it prints:\n{}\n",
                got.trim_matches('\n')
            ));
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems),
    }
}

#[test]
fn every_command_block_in_the_readme_and_docs_runs_as_written() {
    if !common::installed("bash") {
        return;
    }
    let blocks = command_blocks();
    assert!(
        blocks
            .iter()
            .any(|b| b.file == "README.md" && b.how == How::Run),
        "README.md has no block that runs"
    );
    let mut failures = Vec::new();
    let mut not_run = String::new();
    for block in &blocks {
        let place = format!("{}:{} ({})", block.file, block.line, block.lang);
        match &block.how {
            How::NotRun(why) => {
                eprintln!("{place}: not run: {why}");
                // Pinned by file and language, not line, so an edit above a block moves nothing.
                not_run.push_str(&format!("{} ({}): {why}\n", block.file, block.lang));
            }
            _ => match run_block(block) {
                Ok(()) => eprintln!("{place}: ran as written"),
                Err(why) => failures.push(format!("{place}:\n{}\n{why}", block.text)),
            },
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} blocks do not run as written:\n\n{}",
        failures.len(),
        blocks.len(),
        failures.join("\n\n")
    );
    // The exceptions, pinned: a new one is a visible change, reviewed with its reason.
    insta::assert_snapshot!("not_run", not_run);
}

/// The runner itself: a block that fails, or a transcript whose output differs, is caught;
/// directives are read; an unknown directive is refused.
#[test]
fn a_block_that_does_not_run_as_written_is_caught() {
    if !common::installed("bash") {
        return;
    }
    let text = "```sh\ngit session info nosuch\n```\n\
                <!-- run after: git session create one >/dev/null -->\n\
                ```console\n$ git session switch one 2>/dev/null\n~/src/repo.sessions/one\n$ echo hi\nho\n```\n\
                <!-- not run: needs the network -->\n```bash\ncurl example.com\n```\n\
                ```toml\nbase = 1\n```\n";
    let blocks = blocks_of("x.md", text);
    assert_eq!(blocks.len(), 4);
    assert_eq!(
        blocks[1].how,
        How::RunAfter("git session create one >/dev/null".into())
    );
    assert_eq!(blocks[2].how, How::NotRun("needs the network".into()));
    let failed = run_block(&blocks[0]).unwrap_err();
    assert!(failed.starts_with("exit 1"), "{failed}");
    let differs = run_block(&blocks[1]).unwrap_err();
    assert_eq!(
        differs, "$ echo hi\n--- the block shows:\nho\n--- it prints:\nhi\n",
        "only the step that differs is named"
    );
    let bad =
        std::panic::catch_unwind(|| blocks_of("y.md", "<!-- not ran: x -->\n```sh\ntrue\n```\n"));
    assert!(bad.is_err(), "a misspelt directive is refused");
    assert_eq!(
        times_out("since 2026-11-27T10:43:58Z, at 2026-01-01T00:00:00.123Z."),
        "since <time>, at <time>."
    );
}
