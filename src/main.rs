use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = arkdiff::cli::Cli::parse();
    let status = arkdiff::cli::run(cli).unwrap_or_else(|e| {
        eprintln!("arkdiff: error: {e}");
        arkdiff::ExitStatus::Error
    });
    ExitCode::from(status as u8)
}
