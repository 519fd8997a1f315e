use pool::config::PoolConfig;

#[test]
fn the_pool_has_room() {
    let config = PoolConfig::default();
    assert!(config.max_connections >= 1);
    assert!(config.idle_timeout_secs > 0);
}
