fn main() {
    let text = std::fs::read_to_string("config.toml").unwrap_or_default();
    let values = server::parse(&text);
    let listen = server::Listen::from_config(&values);
    println!("listening on {}:{}", listen.host, listen.port);
}
