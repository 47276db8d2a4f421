"""The one exception tree of xtyserver.

Every error carries the protocol code it maps to (``protocol/v1.md`` section
"Error codes"), so a shell can turn any of them into an ``error`` or
``chat.error`` frame without a lookup table of its own::

    XtyError                      root; never raised itself
    ├── PeerError                 the peer broke the protocol (answer, never crash)
    │   ├── FrameError            undecodable or ill-typed frame
    │   ├── BudgetError           modelContext / frame over a budget
    │   ├── ForbiddenContentError a string carries what must not leave the machine
    │   └── ImageError            screenshot refused
    ├── UsageError                we misused our own API (a bug here, not the peer's)
    ├── StoreError                the memory store could not do what was asked
    │   └── StoreContentError     the store refused content (forbidden patterns)
    └── ModelError                the model provider failed a turn

Peer errors become frames; usage errors are bugs and are logged as such. A
frame the session's state does not accept and a missing or wrong token are not
exceptions: the session's transition table answers them (``hello_required``,
``unauthorized``; ``session/machine.py``).
"""

from __future__ import annotations

from collections.abc import Sequence


class XtyError(Exception):
    """Root of every error raised on purpose by xtyserver.

    Attributes:
        code: The protocol error code (``protocol/v1.md`` "Error codes").
        message: A player/mod-facing message. Never contains secrets or internals.
        fields: JSON paths of the offending fields, when known.
    """

    code: str = "internal"

    def __init__(
        self, message: str, *, code: str | None = None, fields: Sequence[str] = ()
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.fields: tuple[str, ...] = tuple(fields)


class PeerError(XtyError):
    """The peer sent something the protocol does not allow.

    ``frame_id`` is the ``id`` of the frame at fault, when it could be read.
    """

    code = "invalid_frame"
    frame_id: str | None = None


class FrameError(PeerError):
    """A frame that cannot be decoded or does not match its type (v1.md "Frames")."""


class BudgetError(PeerError):
    """A frame or modelContext over its budget (v1.md "modelContext budget")."""

    code = "budget_exceeded"


class ForbiddenContentError(PeerError):
    """A string carries a path, account id, key or e-mail (v1.md "Forbidden content")."""

    code = "forbidden_content"


class ImageError(PeerError):
    """A screenshot that is not a real PNG/JPEG/WebP or is too large (v1.md "Images")."""

    code = "invalid_image"


class UsageError(XtyError):
    """Our own code called an API wrongly. Always a bug in xtyserver."""


class StoreError(XtyError):
    """The memory store failed (disk full, locked, closed)."""

    code = "store_error"


class StoreContentError(StoreError):
    """The memory store refused content that must never be stored."""

    code = "forbidden_content"


class ModelError(XtyError):
    """The model provider failed a turn; ``code`` says how (v1.md "chat.error codes")."""

    code = "model_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.retry_after = retry_after
        self.status = status
