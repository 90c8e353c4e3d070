//! Prints a failed command's error and picks its exit code: a [`UserError`] (or a domain error
//! that [`super::words`] turns into one) as its message, details and hint; anything else as an
//! internal failure on one line. Kept apart from the value type, which every `words` file
//! builds: the printer uses `words`, the value type uses nothing of it.

use crate::cli::user_error::UserError;

/// Prints an error the way every command does and returns its exit code.
pub fn report(err: &anyhow::Error) -> i32 {
    use crate::cli::output::{prefix, Prefix};
    crate::cli::output::settle_colour();
    let words = super::words::user_error(err);
    let user = words.as_ref().or_else(|| err.downcast_ref::<UserError>());
    if let Some(user) = user {
        return report_user(user);
    }
    if is_broken_pipe(err) {
        return 0;
    }
    anstream::eprintln!("{} {err:#}", prefix(Prefix::Error));
    1
}

/// Prints a [`UserError`] (message, details, hint) and returns its exit code: for a command whose
/// answer is worded as one without being an error (the guard's refusal).
pub fn report_user(user: &UserError) -> i32 {
    use crate::cli::output::{prefix, Prefix};
    crate::cli::output::settle_colour();
    let mut text = format!("{} {}\n", prefix(Prefix::Error), user.message);
    for line in &user.details {
        text.push_str(&format!("  {line}\n"));
    }
    if let Some(hint) = &user.hint {
        text.push_str(&format!("{} {hint}\n", prefix(Prefix::Hint)));
    }
    crate::cli::output::stderr_whole(&text);
    user.exit_code()
}

/// `git session list | head` closes our stdout early; that is not an error worth a word.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
