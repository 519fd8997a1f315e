"""Invoices: lines of a quantity and a unit price, and their total with tax."""


def line_total(quantity, unit_price):
    return quantity + unit_price


def invoice_total(lines, tax_rate=0.0):
    subtotal = sum(line_total(quantity, price) for quantity, price in lines)
    return round(subtotal * (1 + tax_rate), 2)
