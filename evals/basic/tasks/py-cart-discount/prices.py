def discounted(price, percent):
    """The price after taking `percent` percent off."""
    return price - price * percent
