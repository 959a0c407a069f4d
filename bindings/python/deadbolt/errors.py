"""deadbolt's exceptions: one hierarchy, each carrying the code of deadbolt's C++ errc.

``Error`` is the base; ``code`` names the failure ("not_acquired", "auth_failed", ...) and
``retryable`` says whether the same call may succeed later. Catch the class that says what to
do: ``UsageError`` (fix the call), ``ConnectionError`` (the server could not be reached, or a
reply was lost), ``ServerError`` (the server refused), ``LockError`` (not obtained, or no
longer held: ``NotAcquired``, ``LockLost``, ``Cancelled``).
"""

import builtins

__all__ = ["Error", "UsageError", "ConnectionError", "ServerError", "LockError",
           "NotAcquired", "LockLost", "Cancelled"]


class Error(Exception):
    """Every failure deadbolt reports: the message names the problem and what to do."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code

    @property
    def retryable(self):
        """True when the same call may succeed if repeated later (deadbolt's is_retryable)."""
        from . import _deadbolt  # the native module imports this one: not at the top
        return self.code is not None and _deadbolt.retryable(self.code)


class UsageError(Error, ValueError):
    """The call itself was wrong (a bad name, TTL, option or URL): fix the input."""


class ConnectionError(Error, builtins.ConnectionError):  # noqa: A001 (deadbolt.ConnectionError)
    """The server could not be reached, or the reply was lost (unknown_outcome)."""


class ServerError(Error):
    """The server answered with an error (auth, ACL, wrong type, read-only, ...)."""


class LockError(Error):
    """The lock was not obtained, or is no longer held."""


class NotAcquired(LockError, TimeoutError):
    """Someone else holds the lock and the timeout passed (or blocking=False)."""


class LockLost(LockError):
    """The lease is no longer ours: it expired, was deleted or taken; stop the work."""


class Cancelled(LockError):
    """The wait was cancelled."""
