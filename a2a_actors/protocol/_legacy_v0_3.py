"""Translation between A2A 0.3 and A2A 1.0 JSON-RPC (pure functions, no I/O).

Theory of operation
-------------------
0.3 and 1.0 share JSON-RPC 2.0 but differ in method names (``message/send`` against
``SendMessage``), in the ``kind`` tag on every object, in lower-case kebab enum values
(``input-required``, ``user``), in parts (``{"kind":"file","file":{"bytes"|"uri",…}}``),
in push-config shapes and in cards (reference §8). Everything converts at the edge, so the
rest of the runtime only ever sees 1.0 Structs:

* server side, :func:`decode_params_v0_3` turns a 0.3 envelope into the same
  :class:`~a2a_actors.protocol._jsonrpc.Call` a 1.0 request gives (with the 1.0 method), and
  :func:`encode_result_v0_3` / :func:`encode_error_v0_3` write 1.0 results and errors in
  0.3 form (errors with ``"data": null``; codes 0.3 lacks become -32603, as in a2a-sdk);
* client side, :func:`encode_request_v0_3` writes a 1.0 request as 0.3 and
  :func:`decode_response_v0_3` reads a 0.3 answer (or one SSE ``data:``) into the 1.0
  result type.

0.3 input is rewritten as JSON builtins into the 1.0 shape and then converted by
:mod:`.codec`, so a validation error carries a field path, in 1.0 spelling. Shapes that
cannot be rewritten are left alone for the typed conversion to reject; ``null`` members
of 0.3 objects count as absent. Lossy points, all as a2a-sdk has them: ``historyLength: 0``
means "all history" in 0.3 and becomes unset; push authentication keeps the first of
``schemes``; a 1.0 ``data`` part that is not an object goes out as ``{"value": …}`` with
``metadata.data_part_compat: true`` (and comes back unwrapped); ``mediaType`` and
``filename`` of text and data parts, ``tenant`` and list pagination have no 0.3 form and
are dropped. A 0.3 status update's ``final`` is true for terminal states unless the caller
says otherwise. ``ListTasks`` has no 0.3 method.

Modules
-------
This module is the one name callers import; the work is done by

* :mod:`a2a_actors.protocol._legacy_names`: the 0.3 spellings of method names and task states;
* :mod:`a2a_actors.protocol._legacy_decode`: reading 0.3 (requests on the server, responses on the
  client);
* :mod:`a2a_actors.protocol._legacy_encode`: writing 0.3 (results and errors on the server, requests
  on the client);
* :mod:`a2a_actors.protocol._legacy_card`: the 0.3 AgentCard, read and served (dual-version).
"""

from __future__ import annotations

from a2a_actors.protocol._legacy_decode import (
    decode_params_v0_3 as decode_params_v0_3,
    decode_response_v0_3 as decode_response_v0_3,
    params_from_v0_3 as params_from_v0_3,
    result_from_v0_3 as result_from_v0_3,
)
from a2a_actors.protocol._legacy_encode import (
    encode_error_v0_3 as encode_error_v0_3,
    encode_request_v0_3 as encode_request_v0_3,
    encode_result_v0_3 as encode_result_v0_3,
    error_to_v0_3 as error_to_v0_3,
    params_to_v0_3 as params_to_v0_3,
    result_to_v0_3 as result_to_v0_3,
)
from a2a_actors.protocol._legacy_names import (
    V0_3_METHODS as V0_3_METHODS,
    V1_0_METHODS as V1_0_METHODS,
    is_v0_3_method as is_v0_3_method,
    method_to_v0_3 as method_to_v0_3,
    method_to_v1_0 as method_to_v1_0,
    state_to_v0_3 as state_to_v0_3,
)

__all__ = (
    "V0_3_METHODS",
    "V1_0_METHODS",
    "decode_params_v0_3",
    "decode_response_v0_3",
    "encode_error_v0_3",
    "encode_request_v0_3",
    "encode_result_v0_3",
    "error_to_v0_3",
    "is_v0_3_method",
    "method_to_v0_3",
    "method_to_v1_0",
    "params_from_v0_3",
    "params_to_v0_3",
    "result_from_v0_3",
    "result_to_v0_3",
    "state_to_v0_3",
)
