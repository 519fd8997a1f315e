def to_roman(number):
    """1994 -> 'MCMXCIV'."""
    raise NotImplementedError
