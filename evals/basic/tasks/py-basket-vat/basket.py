from money import round_cents, with_vat


class Basket:
    """The items a customer is about to buy."""

    def __init__(self):
        self.items = []

    def add(self, name, price, quantity=1):
        self.items.append((name, price, quantity))
        return self

    def subtotal(self):
        return round_cents(sum(price * quantity for _, price, quantity in self.items))

    def total_with_vat(self):
        return round_cents(with_vat(self.subtotal()))
