//! The only network calls of shared claims: one fetch of the claims namespace, and pushes with
//! explicit leases. Each runs `git` through the one process helper, with the settings' deadline,
//! no terminal prompt, and `--end-of-options` before the remote's name.

use super::{tracking_prefix, Settings, SharedError, REMOTE_PREFIX};
use crate::git::{Oid, Repo, Run, RunError};
use anyhow::Result;

/// One ref update: `name` under the remote's claims prefix, to `new` (`None`: delete), if the
/// remote still holds `expect` (`None`: if it holds nothing).
#[derive(Debug, Clone)]
pub struct Update {
    pub name: String,
    pub new: Option<Oid>,
    pub expect: Option<Oid>,
}

fn remote_error(settings: &Settings, e: &RunError) -> SharedError {
    let why = match e {
        RunError::TimedOut(d) => format!("no answer within {}s", d.as_secs()),
        RunError::Interrupted => "interrupted".to_string(),
        RunError::Failed { stderr, .. } => stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.trim_start_matches("fatal: ")
                    .trim_start_matches("error: ")
            })
            .find(|l| !l.starts_with("hint:"))
            .unwrap_or("git failed")
            .to_string(),
    };
    SharedError::Remote {
        remote: settings.remote.clone(),
        why,
    }
}

/// Fetches the remote's claims into this clone's tracking namespace, pruned.
pub fn fetch(repo: &Repo, settings: &Settings) -> Result<(), SharedError> {
    let refspec = format!("+{REMOTE_PREFIX}*:{}*", tracking_prefix(&settings.remote));
    Run::new(
        repo.porcelain_dir(),
        [
            // No `gc --auto` in the background of ours: it would pack refs while we write them.
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
            "fetch",
            "--quiet",
            "--no-tags",
            "--prune",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--end-of-options",
            settings.remote.as_str(),
            refspec.as_str(),
        ],
    )
    .deadline(settings.timeout)
    .run()
    .map(|_| ())
    .map_err(|e| remote_error(settings, &e))
}

fn push_args(updates: &[Update], atomic: bool, remote: &str) -> Vec<String> {
    // Not --quiet: it silences the per-ref lines read below.
    let mut args: Vec<String> = [
        "-c",
        "gc.auto=0",
        "-c",
        "maintenance.auto=false",
        "push",
        "--porcelain",
    ]
    .map(String::from)
    .to_vec();
    if atomic {
        args.push("--atomic".to_string());
    }
    args.push("--no-verify".to_string());
    for u in updates {
        args.push(format!(
            "--force-with-lease={REMOTE_PREFIX}{}:{}",
            u.name,
            u.expect.map(|o| o.to_string()).unwrap_or_default()
        ));
    }
    args.push("--end-of-options".to_string());
    args.push(remote.to_string());
    for u in updates {
        let src = u.new.map(|o| o.to_string()).unwrap_or_default();
        args.push(format!("{src}:{REMOTE_PREFIX}{}", u.name));
    }
    args
}

/// The result of each update, read from `git push --porcelain`; `Err` for the whole push when
/// git said nothing per ref (the remote could not be reached, or refused the push whole).
fn run_push(
    repo: &Repo,
    settings: &Settings,
    updates: &[Update],
    atomic: bool,
) -> Result<Result<Vec<Result<(), String>>, SharedError>> {
    let out = Run::new(
        repo.porcelain_dir(),
        push_args(updates, atomic, &settings.remote),
    )
    .deadline(settings.timeout)
    .also_ok(1)
    .run();
    let out = match out {
        Ok(out) => out,
        Err(e) => return Ok(Err(remote_error(settings, &e))),
    };
    let mut results: Vec<Option<Result<(), String>>> = vec![None; updates.len()];
    for line in out.stdout.lines() {
        let mut fields = line.split('\t');
        let (Some(flag), Some(refs), Some(summary)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Some(dst) = refs.rsplit(':').next() else {
            continue;
        };
        let Some(name) = dst.strip_prefix(REMOTE_PREFIX) else {
            continue;
        };
        if let Some(i) = updates.iter().position(|u| u.name == name) {
            results[i] = Some(if flag == "!" {
                Err(summary.trim().to_string())
            } else {
                Ok(())
            });
        }
    }
    if out.code != 0 && results.iter().all(Option::is_none) {
        return Ok(Err(remote_error(
            settings,
            &RunError::Failed {
                status: Some(out.code),
                stderr: out.stderr,
            },
        )));
    }
    // A push that succeeded names no ref that was already up to date ("Everything
    // up-to-date"): no line for a ref is success then, and a failure otherwise.
    let succeeded = out.code == 0;
    let results: Vec<Result<(), String>> = results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| match succeeded {
                true => Ok(()),
                false => Err("the remote did not say".to_string()),
            })
        })
        .collect();
    // What the remote now holds is what this clone last saw of it.
    let prefix = tracking_prefix(&settings.remote);
    let seen: Vec<(String, Option<Oid>)> = updates
        .iter()
        .zip(&results)
        .filter(|(_, r)| r.is_ok())
        .map(|(u, _)| (format!("{prefix}{}", u.name), u.new))
        .collect();
    crate::git::ref_records::set_local_refs(repo.porcelain_dir(), &seen)?;
    Ok(Ok(results))
}

/// Pushes `updates` (atomically when `atomic`): every one applied, or an error naming the
/// first refusal.
pub fn push(
    repo: &Repo,
    settings: &Settings,
    updates: &[Update],
    atomic: bool,
) -> Result<Result<(), SharedError>> {
    Ok(match run_push(repo, settings, updates, atomic)? {
        Err(e) => Err(e),
        Ok(results) => match results.into_iter().find_map(Result::err) {
            None => Ok(()),
            Some(why) => Err(SharedError::Remote {
                remote: settings.remote.clone(),
                why,
            }),
        },
    })
}

/// Pushes `updates` each on its own (not atomic): the result of each.
pub fn push_each(
    repo: &Repo,
    settings: &Settings,
    updates: &[Update],
) -> Result<Result<Vec<Result<(), String>>, SharedError>> {
    run_push(repo, settings, updates, false)
}
