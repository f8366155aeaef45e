"""Problems of independent checks, collected and raised as one usage error."""

from __future__ import annotations

from pytest_niah.errors import NiahError, SetupError


class Problems:
    """Collects the problems of independent checks (``with problems: check()``)."""

    def __init__(self) -> None:
        self.errors: list[NiahError] = []

    def add(self, error: NiahError) -> None:
        """Keep ``error``."""
        self.errors.append(error)

    def __enter__(self) -> Problems:
        return self

    def __exit__(self, kind: object, error: BaseException | None, tb: object) -> bool:
        if isinstance(error, NiahError):
            self.errors.append(error)
            return True
        return False

    def raise_any(self) -> None:
        """Raise the one problem found, or all of them as one :class:`SetupError`."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise SetupError(self.errors)
