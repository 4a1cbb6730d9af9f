"""``OTEL_EXPORTER_OTLP_HEADERS`` parsing: the spec's URL-encoded form, base64 padding, and a clear error."""

from __future__ import annotations

import base64

import pytest

from graphs.tracing.otel import parse_headers


def test_spec_form_is_url_decoded_and_padding_kept() -> None:
    auth = base64.b64encode(b"pk-lf-1:sk-lf-22").decode()
    assert auth.endswith("=")
    assert parse_headers(f"Authorization=Basic%20{auth}") == {"authorization": f"Basic {auth}"}
    assert parse_headers(f"Authorization=Basic {auth}, x-langfuse-ingestion-version=4") == {
        "authorization": f"Basic {auth}",
        "x-langfuse-ingestion-version": "4",
    }


def test_empty_parts_are_skipped_and_a_part_without_value_is_refused() -> None:
    assert parse_headers("") == {} and parse_headers(" , ") == {}
    with pytest.raises(ValueError, match="'api-key' is not key=value"):
        parse_headers("x-team=wp,api-key")
