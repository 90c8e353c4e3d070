//! The words for a session that cannot be named or found ([`SessionError`]).

use crate::base::quote::shortened;
use crate::cli::user_error::UserError;
use crate::session::label::RULE;
use crate::session::SessionError;

pub fn words(e: &SessionError) -> UserError {
    match e {
        SessionError::InvalidLabel { text } => {
            UserError::usage(format!("invalid label \"{}\"", shortened(text))).hinted(RULE)
        }
        SessionError::InvalidLabelFileName { name } => {
            UserError::usage(format!("invalid label file name \"{}\"", shortened(name)))
                .hinted(RULE)
        }
        SessionError::InvalidBase { rev } => {
            UserError::usage(format!("invalid base revision \"{}\"", rev.escape_debug()))
                .hinted("name a branch, tag or commit, such as --base main")
        }
        SessionError::NoSuchSession { label } => {
            UserError::refused(format!("no session named \"{}\"", label.escape_debug()))
                .hinted("`git session list` shows the sessions of this repository")
        }
        SessionError::NoneHere { usage } => UserError::refused("no session here")
            .hinted(format!("name one: {usage} (see git session list)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Label;

    #[test]
    fn a_refused_label_is_one_short_escaped_line_with_the_rule() {
        let long = "a".repeat(65);
        let huge = "x".repeat(5000);
        for bad in [
            "",
            "-x",
            "a b",
            "a\nb",
            "a\u{1b}[31mb",
            "../x",
            &long,
            &huge,
        ] {
            let err = words(&Label::new(bad).expect_err(bad));
            assert!(err.message.starts_with("invalid label \""), "{bad:?}");
            assert!(
                !err.message.contains('\n') && !err.message.contains('\0'),
                "{bad:?}"
            );
            assert_eq!(err.hint.as_deref(), Some(RULE));
            assert!(err.message.chars().count() < 100, "{bad:?} shown shortened");
        }
    }
}
