use crate::money;

/// A customer's order: lines of a unit price (cents) and a quantity, and a discount.
#[derive(Default)]
pub struct Order {
    lines: Vec<(u64, u64)>,
    discount_percent: u64,
}

impl Order {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn line(mut self, unit_cents: u64, quantity: u64) -> Self {
        self.lines.push((unit_cents, quantity));
        self
    }

    pub fn discount(mut self, percent: u64) -> Self {
        self.discount_percent = percent;
        self
    }

    /// What the customer pays, in cents.
    pub fn total(&self) -> u64 {
        let gross: u64 = self.lines.iter().map(|(unit, qty)| unit * qty).sum();
        if self.discount_percent == 0 {
            gross
        } else {
            money::apply_discount(gross, self.discount_percent)
        }
    }

    pub fn receipt(&self) -> String {
        format!("Total: {}", money::format(self.total()))
    }
}
