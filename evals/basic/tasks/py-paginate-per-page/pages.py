"""Splitting a list of results into pages for the web listing."""


def page_count(total):
    """How many pages `total` results fill."""
    return (total + 9) // 10


def paginate(items, page):
    """The items shown on page `page` (counted from 1)."""
    start = (page - 1) * 10
    return items[start:start + 10]
