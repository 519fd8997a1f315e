from config import load


def first_page(books):
    """The books shown on the first page, sorted as configured."""
    config = load()
    ordered = sorted(books, key=lambda book: book[config["sort"]])
    return ordered[: config["page_size"]]
