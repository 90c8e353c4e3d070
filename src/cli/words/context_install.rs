//! The words for a settings file `context install` would not change ([`InstallError`]): the
//! message is the error's own line, the hint says how to get past it.

use crate::cli::user_error::UserError;
use crate::context::hook_config::InstallError;

pub fn words(e: &InstallError) -> UserError {
    let hint = match e {
        InstallError::Malformed { .. } | InstallError::NotJson { .. } => {
            "fix the file by hand, or move it aside and run this again"
        }
        InstallError::NoHome => {
            "set HOME, or install into the project with `git session context install`"
        }
    };
    UserError::refused(e.to_string()).hinted(hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(e: InstallError) -> String {
        let u = words(&e);
        let hint = u.hint.map(|h| format!(" | {h}")).unwrap_or_default();
        format!("{}{hint}", u.message)
    }

    #[test]
    fn every_variant_keeps_its_words() {
        insta::assert_snapshot!(
            [
                shown(InstallError::Malformed {
                    file: "/r/.claude/settings.json".into(),
                    what: "`hooks` is not an object".to_string(),
                }),
                shown(InstallError::NotJson {
                    file: "/r/.claude/settings.json".into(),
                    why: "EOF while parsing an object at line 1 column 1".to_string(),
                }),
                shown(InstallError::NoHome),
            ]
            .join("\n"),
            @r###"
        /r/.claude/settings.json: `hooks` is not an object | fix the file by hand, or move it aside and run this again
        /r/.claude/settings.json: not valid JSON (EOF while parsing an object at line 1 column 1) | fix the file by hand, or move it aside and run this again
        HOME is not set; cannot find the user's Claude Code settings | set HOME, or install into the project with `git session context install`
        "###
        );
    }
}
