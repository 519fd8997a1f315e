const config = require("./config");

// The address the server listens on, as shown in its first log line.
function listenAddress() {
  return `http://${config.host}:${config.port}/`;
}

module.exports = { listenAddress };
