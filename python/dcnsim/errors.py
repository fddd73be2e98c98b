"""Errors raised for bad input."""


class SpecError(ValueError):
    """A malformed or impossible spec. `field` is the dotted path of the offending key."""

    def __init__(self, field: str, message: str):
        super().__init__(f"spec error at `{field}`: {message}")
        self.field = field
        self.message = message
