"""Every error belongs to one of four kinds, and the API maps each kind to one response, in one place."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from agents.llm import LLMOutputError, LLMTimeoutError, LLMUnavailableError, ModelFileError
from api.errors import install_error_handlers
from knowledge.embeddings import EmbeddingError
from knowledge.errors import BackendUnavailableError, BadInputError, BudgetExceededError, LLMOutputInvalidError
from knowledge.kg.schema import GraphInputError
from knowledge.kg.store import GraphStoreUnavailable
from knowledge.loaders.errors import LoadError
from knowledge.vector_store import BadFilterError, BadTenantError


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (LLMUnavailableError("down"), BackendUnavailableError),
        (LLMTimeoutError("slow"), BackendUnavailableError),
        (ModelFileError("bad hash"), BackendUnavailableError),
        (GraphStoreUnavailable("no redis"), BackendUnavailableError),
        (EmbeddingError("no model"), BackendUnavailableError),
        (LLMOutputError("not json", raw="{"), LLMOutputInvalidError),
        (BadFilterError("key 'x'"), BadInputError),
        (BadTenantError("tenant 'A B'"), BadInputError),
        (GraphInputError("label"), BadInputError),
        (LoadError("a.pdf", "encrypted"), BadInputError),
    ],
)
def test_each_error_names_its_kind(error: Exception, kind: type[Exception]) -> None:
    assert isinstance(error, kind)


@pytest.mark.parametrize(
    ("error", "status", "type_"),
    [
        (BadFilterError("unknown filter key 'colour'"), 422, "invalid_request"),
        (LLMUnavailableError("LLM at 'http://127.0.0.1:1' is down"), 503, "backend_unavailable"),
        (LLMOutputError("reply is not JSON", raw="{"), 502, "llm_output_invalid"),
        (BudgetExceededError("over 10 calls"), 429, "budget_exceeded"),
    ],
)
async def test_the_api_maps_each_kind_once(error: Exception, status: int, type_: str) -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    async def boom() -> None:
        raise error

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        response = await client.get("/boom")
    assert response.status_code == status
    assert response.json()["error"]["type"] == type_ and response.json()["error"]["message"] == str(error)
