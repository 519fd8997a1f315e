// The server's configuration.
module.exports = {
  host: "127.0.0.1",
  port: 3000,
  staticDir: "public",
};
