//! `cargo run -p wright-testkit --example tiny_gguf -- PATH`: writes the tests' tiny GGUF
//! model (random weights, a chat template with tools) to PATH, to try the embedded engine
//! by hand without downloading a model.

fn main() -> Result<(), String> {
    let path = std::env::args().nth(1).ok_or("usage: tiny_gguf PATH")?;
    wright_testkit::tiny_gguf::write_tiny_gguf(
        std::path::Path::new(&path),
        &wright_testkit::tiny_gguf::TinyModel::default(),
    )
    .map_err(|err| err.to_string())
}
