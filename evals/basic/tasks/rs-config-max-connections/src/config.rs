/// How the pool is sized.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolConfig {
    pub max_connections: u32,
    pub idle_timeout_secs: u64,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_connections: 10,
            idle_timeout_secs: 300,
        }
    }
}

impl PoolConfig {
    /// The configuration the program runs with.
    pub fn load() -> Self {
        Self::default()
    }
}
