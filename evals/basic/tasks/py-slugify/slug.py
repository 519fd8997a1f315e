def slugify(text):
    """'Hello, World!' -> 'hello-world'."""
    raise NotImplementedError
