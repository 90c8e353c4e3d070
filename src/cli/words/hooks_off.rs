//! What puts the guard back in force, for each reason git would not run it ([`Off`]).
//!
//! Invariant: a hint never sends the user round in a circle. `hooks install` repairs what is
//! ours (a missing hook, our file without its executable bit, a generated hooks directory a
//! session lacks); what is the user's (their hook, their `core.hooksPath`, a manager file install
//! could not edit) is named with the change to make, and after an install the hint never says
//! to run install again.

use crate::hooks::force::Off;
use crate::hooks::skips::GUARD_NAME;
use std::path::Path;

/// The hint for `off` in `worktree`; `after_install`: `hooks install` has just run there.
pub fn fix(off: &Off, worktree: &Path, after_install: bool) -> String {
    let here = worktree.display();
    let install = format!("run `git session hooks install` in {here}");
    match off {
        Off::ConfigUnreadable { .. } => format!(
            "repair the git configuration named above (`git config --list --show-origin` in \
             {here} shows where it breaks), then {install}"
        ),
        Off::RelativeWithoutWorktree => {
            "run the command inside a worktree of the repository".to_string()
        }
        Off::HooksDisabled => format!(
            "git runs no hook while core.hooksPath is /dev/null: unset it (`git config --unset \
             core.hooksPath`), then {install}; git 2.54 or later runs the guard as a \
             config-based hook despite it"
        ),
        Off::MissingDir { rel, .. } if after_install => format!(
            "the main worktree has no {} either: run your hook manager's install there (it makes \
             the directory), then {install}",
            rel.display()
        ),
        Off::Unreadable { file, .. } => {
            format!("make {} a readable file, then {install}", file.display())
        }
        Off::Switched(skip) => {
            let change = match (&skip.set_in, skip.variable) {
                (Some(file), var) => format!("take `{var}=0` out of {}", file.display()),
                (None, var @ ("SKIP" | "LEFTHOOK_EXCLUDE")) => {
                    format!("take {GUARD_NAME} out of {var} where commits are made")
                }
                (None, var) => format!("unset {var} where commits are made"),
            };
            format!(
                "{change}; to pass the guard by on purpose, `GIT_SESSION_GUARD=off git commit \
                 ...` does it and is audited"
            )
        }
        Off::NotExecutable { file, ours: false } => format!(
            "`chmod +x {}`: it is your hook, so making it executable runs the rest of it too",
            file.display()
        ),
        Off::ManagerSkips {
            manager, carriers, ..
        } if after_install => {
            let file = carriers
                .first()
                .map(|c| c.display().to_string())
                .unwrap_or_else(|| "its configuration".to_string());
            format!(
                "add the guard to {}'s pre-commit in {file} (the lines are above), then `git \
                 session hooks status` in {here}",
                manager.name()
            )
        }
        _ => {
            if after_install {
                format!(
                    "install ran and git still would not run the guard: `git session hooks \
                     status` in {here} names the file git runs instead"
                )
            } else {
                install
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::managers::Manager;
    use crate::hooks::skips::Skip;
    use std::path::PathBuf;

    /// Every reason, before and after an install, pinned.
    #[test]
    fn every_reason_has_its_fix() {
        let p = |s: &str| PathBuf::from(s);
        let reasons = [
            Off::ConfigUnreadable {
                worktree: p("/w"),
                error: "bad config line 3".into(),
            },
            Off::RelativeWithoutWorktree,
            Off::HooksDisabled,
            Off::MissingDir {
                rel: p(".husky/_"),
                dir: p("/w/.husky/_"),
            },
            Off::NoHook {
                file: p("/w/.git/hooks/pre-commit"),
            },
            Off::Unreadable {
                file: p("/w/.git/hooks/pre-commit"),
                error: "Permission denied".into(),
            },
            Off::NotExecutable {
                file: p("/w/.git/hooks/pre-commit"),
                ours: true,
            },
            Off::NotExecutable {
                file: p("/w/.git/hooks/pre-commit"),
                ours: false,
            },
            Off::Foreign {
                file: p("/w/.git/hooks/pre-commit"),
            },
            Off::ManagerSkips {
                file: p("/w/.git/hooks/pre-commit"),
                manager: Manager::Lefthook,
                carriers: vec![p("/w/lefthook.yml")],
            },
            Off::Switched(Skip {
                manager: Manager::Husky,
                variable: "HUSKY",
                value: "0".into(),
                set_in: None,
            }),
            Off::Switched(Skip {
                manager: Manager::Husky,
                variable: "HUSKY",
                value: "0".into(),
                set_in: Some(p("/home/u/.config/husky/init.sh")),
            }),
            Off::Switched(Skip {
                manager: Manager::PreCommit,
                variable: "SKIP",
                value: "flake8,git-session-guard".into(),
                set_in: None,
            }),
        ];
        let mut out = String::new();
        for off in &reasons {
            for after in [false, true] {
                let hint = fix(off, Path::new("/w"), after);
                assert!(!hint.contains('\n'), "{hint}");
                // Install is the whole fix exactly where the domain says it repairs the cause,
                // and after an install the hint is never install again.
                let install_alone = hint.starts_with("run `git session hooks install`");
                assert_eq!(install_alone, !after && off.install_repairs(), "{off:?}");
                out.push_str(&format!(
                    "{off}\n  after install: {after}\n  hint: {hint}\n"
                ));
            }
        }
        insta::assert_snapshot!(out);
    }
}
