"""Helpers for testing code that uses eviseek: a real OpenAI-compatible server on 127.0.0.1.

Nothing here is imported by ``import eviseek``; tests import it explicitly.
"""

from eviseek.testing.openai_server import (
    OpenAITestServer,
    ServerReply,
    chat_completion,
    decode_data_url,
    error_body,
    request_images,
    request_texts,
    responses_body,
)

__all__ = [
    "OpenAITestServer",
    "ServerReply",
    "chat_completion",
    "decode_data_url",
    "error_body",
    "request_images",
    "request_texts",
    "responses_body",
]
