//! PLACEHOLDER
#[derive(Debug, clap::Args)]
pub struct Args {}
pub fn run(_args: Args) -> anyhow::Result<()> {
    Ok(())
}
