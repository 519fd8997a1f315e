"""Settings of the price fetcher."""

BASE_URL = "https://prices.example.com/api"
TIMEOUT = 30  # seconds
RETRIES = 2
