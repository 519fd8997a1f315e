// Date helpers; dates are "YYYY-MM-DD" strings, in UTC.

function parseDate(text) {
  const [year, month, day] = text.split("-").map(Number);
  return new Date(Date.UTC(year, month - 1, day));
}

function formatDate(date) {
  return date.toISOString().slice(0, 10);
}

function addDays(text, days) {
  const date = parseDate(text);
  date.setUTCDate(date.getUTCDay() + days);
  return formatDate(date);
}

module.exports = { parseDate, formatDate, addDays };
