fn main() {
    std::process::exit(git_session::cli::main());
}
