const { padLeft } = require("./pad");

// Rows of [name, number], the numbers right-aligned in a column of `width`.
function table(rows, width) {
  return rows.map(([name, value]) => `${name}:${padLeft(value, width)}`).join("\n");
}

module.exports = { table };
