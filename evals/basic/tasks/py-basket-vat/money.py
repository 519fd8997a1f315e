"""Money helpers shared by the shop's modules."""
import math

VAT_RATE = 0.2


def round_cents(amount):
    """`amount` rounded to the nearest cent."""
    return math.floor(amount * 100) / 100


def with_vat(amount):
    return amount * (1 + VAT_RATE)
