fn main() {
    let text = std::fs::read_to_string("app.conf").unwrap_or_default();
    let settings = applog::Settings::from_conf(&text);
    println!("{} logs at {}", settings.name, settings.log_level);
}
