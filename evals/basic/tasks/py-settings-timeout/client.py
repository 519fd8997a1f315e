"""A small client for the prices API (the requests are built here, sent elsewhere)."""
import settings


def request_options(path):
    """What the HTTP layer is given for a GET of `path`."""
    return {
        "url": settings.BASE_URL.rstrip("/") + "/" + path.lstrip("/"),
        "timeout": settings.TIMEOUT,
        "retries": settings.RETRIES,
    }
