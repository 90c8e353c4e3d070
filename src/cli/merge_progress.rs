//! A batch of merges on a terminal: one progress line per session worked on (a spinner, its
//! number in the batch and the time it takes, then whether it was merged or skipped), with every
//! message of the merges printed above the lines. Nothing of it where stderr is no terminal: the
//! batch's output there is its summary alone, as before.
//!
//! Invariant: the lines are gone when the batch ends (dropped), so the summary that follows is
//! the same on a terminal and elsewhere.

use crate::cli::output;
use crate::lifecycle::merge_batch::Observer;
use crate::session::Label;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::cell::RefCell;
use std::time::Duration;

pub struct BatchProgress {
    lines: MultiProgress,
    current: RefCell<Option<ProgressBar>>,
    /// The lines of the sessions done, kept: a line whose bar is dropped is not drawn again
    /// after a message printed above the lines.
    done: RefCell<Vec<ProgressBar>>,
}

impl BatchProgress {
    /// The progress of a batch, when stderr is a terminal.
    pub fn on_terminal() -> Option<BatchProgress> {
        if !output::stderr_is_terminal() {
            return None;
        }
        let lines = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        output::set_progress(Some(lines.clone()));
        Some(BatchProgress {
            lines,
            current: RefCell::new(None),
            done: RefCell::new(Vec::new()),
        })
    }

    /// Shown again after a prompt hid the lines (a new target forgets what the old one drew,
    /// so only then).
    fn shown(&self) {
        if self.lines.is_hidden() {
            self.lines.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn style(template: &str) -> ProgressStyle {
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
    }
}

impl Observer for BatchProgress {
    fn started(&self, label: &Label, at: usize, of: usize) {
        self.shown();
        let bar = self.lines.add(ProgressBar::new_spinner());
        bar.set_style(Self::style("{spinner} merging {prefix} ({msg}) {elapsed}"));
        bar.set_prefix(label.to_string());
        bar.set_message(format!("{at} of {of}"));
        bar.enable_steady_tick(Duration::from_millis(100));
        *self.current.borrow_mut() = Some(bar);
    }

    fn finished(&self, label: &Label, merged: bool) {
        self.shown();
        if let Some(bar) = self.current.borrow_mut().take() {
            bar.set_style(Self::style("{msg} {elapsed}"));
            let done = if merged { "merged " } else { "skipped" };
            bar.finish_with_message(format!("{done} {label}"));
            self.done.borrow_mut().push(bar);
        }
    }
}

impl Drop for BatchProgress {
    fn drop(&mut self) {
        let _ = self.lines.clear();
        output::set_progress(None);
    }
}
