"""The one error hierarchy of a2a-actors, and the one table that maps it to the wire.

Hierarchy::

    A2AError                         base: code, message, data (ErrorInfo details), remote
    ├── JSONRPCError                 the standard JSON-RPC 2.0 errors
    │   ├── ParseError               -32700  body is not JSON
    │   ├── InvalidRequestError      -32600  not a JSON-RPC 2.0 request (or a batch)
    │   ├── MethodNotFoundError      -32601
    │   │   └── MethodNotAllowedError -32601  a path that takes other HTTP methods (405)
    │   ├── InvalidParamsError       -32602  params fail validation (``field`` names the path)
    │   └── InternalError            -32603
    ├── TaskNotFoundError            -32001  unknown task, or one the caller may not see
    ├── TaskNotCancelableError       -32002  cancel of a terminal task
    ├── PushNotificationNotSupportedError -32003
    ├── UnsupportedOperationError    -32004  e.g. a message to a terminal task
    ├── ContentTypeNotSupportedError -32005
    ├── InvalidAgentResponseError    -32006  the agent broke the protocol
    ├── ExtendedAgentCardNotConfiguredError -32007
    ├── ExtensionSupportRequiredError -32008
    ├── VersionNotSupportedError     -32009
    ├── ServerBusyError              -32050  a capacity limit was hit (HTTP 429, Retry-After)
    ├── UnauthenticatedError         -32051  missing or wrong credentials (HTTP 401)
    ├── PayloadTooLargeError         -32052  past a size limit (HTTP 413, gRPC RESOURCE_EXHAUSTED)
    └── IllegalTransitionError       (local only) a state change outside the lifecycle table

Every error carries its wire identity in :data:`ERROR_TABLE` (JSON-RPC code, HTTP status,
``google.rpc`` status name and ``ErrorInfo.reason``); transports read that table and nothing
else. The same classes are raised by our client for errors a remote peer sent: then
``remote`` is true and ``data`` holds the peer's details verbatim.

The -32050/-32051/-32052 codes are ours, in the A2A server range (-32001..-32099); A2A 1.0
assigns no code to capacity, authentication or size failures. A size failure is not a
capacity one: the same request fails again, so it is not a ``ServerBusyError`` (which
clients retry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = (
    "A2AError",
    "ContentTypeNotSupportedError",
    "ERROR_DOMAIN",
    "ERROR_TABLE",
    "ErrorSpec",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "IllegalTransitionError",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "MethodNotAllowedError",
    "InvalidRequestError",
    "JSONRPCError",
    "MethodNotFoundError",
    "ParseError",
    "PushNotificationNotSupportedError",
    "PayloadTooLargeError",
    "ServerBusyError",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
    "error_for_code",
    "error_for_reason",
)

ERROR_DOMAIN = "a2a-protocol.org"
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest"


@dataclass(frozen=True, slots=True)
class ErrorSpec:
    """The wire identity of one error class."""

    code: int
    http_status: int
    grpc_status: str
    reason: str
    default_message: str


class A2AError(Exception):
    """Base of every protocol error.

    Args:
        message: Human-readable text; the class default when omitted.
        data: Extra ``google.rpc`` detail objects (``@type``-tagged dicts) to send after
            the ErrorInfo, or, for a remote error, the peer's whole ``data`` verbatim.
        metadata: String metadata for the ErrorInfo (e.g. ``{"taskId": ...}``).
        remote: True when the error was received from a peer rather than raised here.
        code: The peer's JSON-RPC code, for a remote error whose code has no class here.
    """

    spec: ClassVar[ErrorSpec]

    def __init__(
        self,
        message: str | None = None,
        *,
        data: list[Any] | None = None,
        metadata: dict[str, str] | None = None,
        remote: bool = False,
        code: int | None = None,
    ) -> None:
        self.message = message if message is not None else self.spec.default_message
        self._code = code
        self.data = data
        self.metadata = metadata or {}
        self.remote = remote
        super().__init__(self.message)

    @property
    def code(self) -> int:
        """The JSON-RPC error code."""
        return self.spec.code if self._code is None else self._code

    @property
    def http_status(self) -> int:
        """The HTTP status of the HTTP+JSON binding."""
        return self.spec.http_status

    @property
    def reason(self) -> str:
        """The ``google.rpc.ErrorInfo`` reason."""
        return self.spec.reason

    def error_info(self) -> dict[str, Any]:
        """The ``google.rpc.ErrorInfo`` detail for this error, in ProtoJSON form."""
        return {
            "@type": ERROR_INFO_TYPE,
            "reason": self.spec.reason,
            "domain": ERROR_DOMAIN,
            "metadata": dict(self.metadata),
        }

    def details(self) -> list[Any]:
        """The detail list sent as JSON-RPC ``error.data`` / REST ``error.details``."""
        if self.remote and self.data is not None:
            return list(self.data)
        return [self.error_info(), *(self.data or ())]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class JSONRPCError(A2AError):
    """A standard JSON-RPC 2.0 error."""


class ParseError(JSONRPCError):
    """The body is not valid JSON (or not UTF-8)."""


class InvalidRequestError(JSONRPCError):
    """The body is JSON but not a single JSON-RPC 2.0 request object."""


class MethodNotFoundError(JSONRPCError):
    """The method name is not one of the A2A methods."""


class MethodNotAllowedError(MethodNotFoundError):
    """An HTTP method the path does not take (HTTP 405): the operation is not implemented
    there."""


class InvalidParamsError(JSONRPCError):
    """The params do not validate. ``field`` names the offending path when known."""

    def __init__(
        self,
        message: str | None = None,
        *,
        field: str | None = None,
        data: list[Any] | None = None,
        metadata: dict[str, str] | None = None,
        remote: bool = False,
        code: int | None = None,
    ) -> None:
        self.field = field
        if field is not None and data is None and not remote:
            violation = {"field": field, "description": message or "invalid value"}
            data = [{"@type": BAD_REQUEST_TYPE, "fieldViolations": [violation]}]
            metadata = {"field": field, **(metadata or {})}
        super().__init__(message, data=data, metadata=metadata, remote=remote, code=code)


class InternalError(JSONRPCError):
    """An unexpected server-side failure."""


class TaskNotFoundError(A2AError):
    """The task does not exist, or the caller is not allowed to see it."""


class TaskNotCancelableError(A2AError):
    """The task is terminal (canceled included) and cannot be canceled."""


class PushNotificationNotSupportedError(A2AError):
    """The agent does not declare ``capabilities.pushNotifications``."""


class UnsupportedOperationError(A2AError):
    """The operation is not possible for this agent or task (e.g. a terminal task)."""


class ContentTypeNotSupportedError(A2AError):
    """The request, or a part of it, has a media type the agent does not accept."""


class InvalidAgentResponseError(A2AError):
    """The agent produced something the protocol does not allow."""


class ExtendedAgentCardNotConfiguredError(A2AError):
    """The extended card is declared but none is configured."""


class ExtensionSupportRequiredError(A2AError):
    """The client did not activate an extension the agent requires."""


class VersionNotSupportedError(A2AError):
    """The ``A2A-Version`` of the request is not served here."""


class ServerBusyError(A2AError):
    """A capacity limit was reached; retry after ``retry_after`` seconds."""

    def __init__(
        self,
        message: str | None = None,
        *,
        retry_after: float = 1.0,
        data: list[Any] | None = None,
        metadata: dict[str, str] | None = None,
        remote: bool = False,
        code: int | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, data=data, metadata=metadata, remote=remote, code=code)


class UnauthenticatedError(A2AError):
    """Credentials are missing or wrong."""


class PayloadTooLargeError(A2AError):
    """A request (or a message) is larger than a limit; the message names the limit. Not
    retryable: the same request fails again."""


class IllegalTransitionError(A2AError):
    """A task state change outside the lifecycle table. The state is left unchanged.

    Raised locally by :class:`~a2a_actors.protocol._state.TaskMachine`; when an agent causes
    it, the runtime fails that task and reports InvalidAgentResponse to callers.
    """


def _spec(code: int, http: int, grpc: str, reason: str, message: str) -> ErrorSpec:
    return ErrorSpec(code, http, grpc, reason, message)


#: The one table: each error class to its JSON-RPC code, HTTP status, gRPC status, reason.
ERROR_TABLE: dict[type[A2AError], ErrorSpec] = {
    ParseError: _spec(-32700, 400, "INVALID_ARGUMENT", "PARSE_ERROR", "Invalid JSON payload"),
    InvalidRequestError: _spec(
        -32600, 400, "INVALID_ARGUMENT", "INVALID_REQUEST", "Request payload validation error"
    ),
    MethodNotFoundError: _spec(-32601, 404, "NOT_FOUND", "METHOD_NOT_FOUND", "Method not found"),
    MethodNotAllowedError: _spec(
        -32601, 405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED", "Method not allowed"
    ),
    InvalidParamsError: _spec(
        -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS", "Invalid parameters"
    ),
    InternalError: _spec(-32603, 500, "INTERNAL", "INTERNAL_ERROR", "Internal error"),
    TaskNotFoundError: _spec(-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND", "Task not found"),
    TaskNotCancelableError: _spec(
        -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE", "Task cannot be canceled"
    ),
    PushNotificationNotSupportedError: _spec(
        -32003,
        400,
        "FAILED_PRECONDITION",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
        "Push notifications are not supported",
    ),
    UnsupportedOperationError: _spec(
        -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION", "Operation not supported"
    ),
    ContentTypeNotSupportedError: _spec(
        -32005,
        400,
        "INVALID_ARGUMENT",
        "CONTENT_TYPE_NOT_SUPPORTED",
        "Content type not supported",
    ),
    InvalidAgentResponseError: _spec(
        -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE", "Invalid agent response"
    ),
    ExtendedAgentCardNotConfiguredError: _spec(
        -32007,
        400,
        "FAILED_PRECONDITION",
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        "Extended agent card not configured",
    ),
    ExtensionSupportRequiredError: _spec(
        -32008,
        400,
        "FAILED_PRECONDITION",
        "EXTENSION_SUPPORT_REQUIRED",
        "Extension support required",
    ),
    VersionNotSupportedError: _spec(
        -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED", "Version not supported"
    ),
    ServerBusyError: _spec(
        -32050, 429, "RESOURCE_EXHAUSTED", "SERVER_BUSY", "Server busy, retry later"
    ),
    UnauthenticatedError: _spec(
        -32051, 401, "UNAUTHENTICATED", "UNAUTHENTICATED", "Authentication required"
    ),
    PayloadTooLargeError: _spec(
        -32052, 413, "RESOURCE_EXHAUSTED", "PAYLOAD_TOO_LARGE", "Payload too large"
    ),
    IllegalTransitionError: _spec(
        -32006, 500, "INTERNAL", "INVALID_AGENT_RESPONSE", "Illegal task state transition"
    ),
}

for _cls, _s in ERROR_TABLE.items():
    _cls.spec = _s
A2AError.spec = ERROR_TABLE[InternalError]

_BY_CODE: dict[int, type[A2AError]] = {}
_BY_REASON: dict[str, type[A2AError]] = {}
for _cls, _s in ERROR_TABLE.items():
    if _cls is not IllegalTransitionError:
        _BY_CODE.setdefault(_s.code, _cls)
        _BY_REASON.setdefault(_s.reason, _cls)


def error_for_code(code: int) -> type[A2AError]:
    """The error class for a JSON-RPC code; :class:`A2AError` itself for unknown codes."""
    return _BY_CODE.get(code, A2AError)


def error_for_reason(reason: str) -> type[A2AError] | None:
    """The error class for an ``ErrorInfo.reason``, or None when the reason is unknown."""
    return _BY_REASON.get(reason)
