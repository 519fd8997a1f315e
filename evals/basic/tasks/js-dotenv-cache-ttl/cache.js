const { readEnvFile } = require("./env");

// The cache's settings, from the .env file of the working directory.
function cacheSettings() {
  const env = readEnvFile(".env");
  return { dir: env.CACHE_DIR, ttlSeconds: Number(env.CACHE_TTL) };
}

if (require.main === module) {
  const { dir, ttlSeconds } = cacheSettings();
  console.log(`cache in ${dir}, entries kept ${ttlSeconds} s`);
}

module.exports = { cacheSettings };
