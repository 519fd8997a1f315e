fn main() {
    let config = pool::config::PoolConfig::load();
    println!(
        "max_connections={} idle_timeout={}s",
        config.max_connections, config.idle_timeout_secs
    );
}
