from prices import discounted


def total(items, percent=0):
    """items: (price, quantity) pairs; the sum after the discount, rounded to cents."""
    return round(sum(discounted(price, percent) * qty for price, qty in items), 2)
