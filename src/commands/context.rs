//! PLACEHOLDER: replaced by the helper building this command.

/// Not built yet.
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    Err(crate::error::UserError::refused("context is not built yet").into())
}
