use clap::Parser;

fn main() {
    let mut cli = arkdiff::cli::Cli::parse();
    if let Some(arkdiff::cli::Command::Summarize(args)) = cli.command.take() {
        std::process::exit(arkdiff::baseline::summarize(&args) as i32);
    }
    let status = match cli.into_config() {
        Ok(config) => arkdiff::run(&config),
        Err(e) => {
            eprintln!("arkdiff: error: {e}");
            arkdiff::ExitStatus::Error
        }
    };
    std::process::exit(status as i32);
}
