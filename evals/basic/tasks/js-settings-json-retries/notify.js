const { loadSettings } = require("./settings");

// The delays (ms) before each retry of a failed notification: 200, 400, 800, ...
function retryDelays() {
  const { retries, backoffMs } = loadSettings();
  return Array.from({ length: retries }, (_, i) => backoffMs * 2 ** i);
}

module.exports = { retryDelays };
