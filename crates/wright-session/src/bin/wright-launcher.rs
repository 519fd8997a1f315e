//! `wright-launcher`: the sandbox launcher and nothing else, for programs that embed
//! wright's library and cannot be their own launcher (see `wright_session::Launcher`).
//! Run any other way it only fails (status 2): it is run by wright, not by hand.

fn main() -> std::process::ExitCode {
    wright_session::launch_if_asked();
    std::process::ExitCode::from(2)
}
