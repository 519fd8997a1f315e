// Prices as shown in the shop: formatPrice(12.5) -> "12.50 €".
function formatPrice(amount) {
  return `${amount.toFixed(2)} €`;
}

// The total of a cart's lines ({ price, quantity }), formatted.
function formatTotal(lines) {
  const total = lines.reduce((sum, line) => sum + line.price * line.quantity, 0);
  return formatPrice(total);
}

module.exports = { formatPrice, formatTotal };
