use clap::Parser;

fn main() {
    let cli = arkdiff::cli::Cli::parse();
    let status = match cli.into_config() {
        Ok(config) => arkdiff::run(&config),
        Err(e) => {
            eprintln!("arkdiff: error: {e}");
            arkdiff::ExitStatus::Error
        }
    };
    std::process::exit(status as i32);
}
