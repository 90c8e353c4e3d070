//! `[list]`: how `git session list` orders its sessions when `--sort` is not given.
//!
//! Invariant: this only orders what `list` shows; `--sort` on the command line always wins,
//! and the default (no key) is the order by label that `list` always had.

use super::error::{bad, ConfigError};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawList {
    sort: Option<String>,
}

/// The order of `list`'s sessions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ListSort {
    /// By label.
    #[default]
    Label,
    /// The agents that need the person first (see `crate::context::attention::State::rank`).
    Attention,
}

/// What `[list]` says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct List {
    pub sort: ListSort,
}

impl List {
    pub(super) fn apply(&mut self, file: &Path, raw: RawList) -> Result<(), ConfigError> {
        if let Some(sort) = raw.sort {
            self.sort = match sort.as_str() {
                "label" => ListSort::Label,
                "attention" => ListSort::Attention,
                _ => return Err(bad(file, "list.sort", "\"label\" or \"attention\"")),
            };
        }
        Ok(())
    }
}
