"""Request size limits, enforced before a handler reads the body (pure ASGI middleware)."""

from __future__ import annotations

import contextlib
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import error_body
from knowledge.errors import BudgetExceededError


class _TooLarge(BudgetExceededError):
    pass


class BodySizeLimit:
    """Refuses a body over its limit with 413: ``max_upload`` under ``upload_prefix``, else ``max_body``."""

    def __init__(self, app: ASGIApp, *, max_body: int, max_upload: int, upload_prefix: str = "/v1/documents") -> None:
        self.app = app
        self.max_body = max_body
        self.max_upload = max_upload
        self.upload_prefix = upload_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_upload if scope["path"].startswith(self.upload_prefix) else self.max_body
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _refuse(send, limit)
            return
        seen = 0
        exceeded = False

        async def counting_receive() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    exceeded = True
                    raise _TooLarge
            return message

        async def guarded_send(message: Message) -> None:
            if not exceeded:  # once over the limit, whatever the app answers is replaced by the 413
                await send(message)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, counting_receive, guarded_send)
        if exceeded:
            await _refuse(send, limit)


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps(error_body("too_large", f"request body over the limit of {limit} bytes")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
