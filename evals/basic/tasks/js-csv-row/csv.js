// Rows of cells written as CSV lines.

function quote(cell) {
  const text = String(cell);
  if (text.includes(";") || text.includes('"')) {
    return '"' + text.replace(/"/g, '""') + '"';
  }
  return text;
}

function toCsv(rows) {
  return rows.map((row) => row.map(quote).join(",")).join("\n");
}

module.exports = { toCsv };
