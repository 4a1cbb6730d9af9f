"""``agents.roles.smalltalk``: conversation is told from requests for knowledge by its words alone."""

from __future__ import annotations

import pytest

from agents.roles.smalltalk import MAX_WORDS, small_talk

SOCIAL = [
    "Thanks, Waypoint!",
    "thank you so much",
    "Hello",
    "hi there",
    "Good morning!",
    "Who are you?",
    "What can you do?",
    "How are you doing today?",
    "What is your name?",
    "ok, great",
    "Bye!",
    "That's helpful, thanks",
    "👍",
]
REQUESTS = [
    "Summarise the Harrow document.",
    "Who designed the lighthouse at Harrow Point?",
    "uuid storage size",
    "Thanks! Who designed the lighthouse?",
    "Can you tell me about pg_dump?",
    "Hello, what is the default of log_min_duration_statement?",
    "Is the Great Gale of 1889 in the knowledge base?",
    "What is it?",  # no social word: searched as asked
    "",
    "   ",
]


@pytest.mark.parametrize("message", SOCIAL)
def test_social_messages_are_small_talk(message: str) -> None:
    assert small_talk(message)


@pytest.mark.parametrize("message", REQUESTS)
def test_anything_that_names_something_is_a_request(message: str) -> None:
    assert not small_talk(message)


def test_a_long_message_is_a_request_whatever_its_words() -> None:
    social = " ".join(["thanks"] * MAX_WORDS)
    assert small_talk(social) and not small_talk(social + " thanks")


def test_the_assistant_name_is_its_own() -> None:
    assert small_talk("Thanks, Kestrel!", assistant="Kestrel") and not small_talk("Thanks, Kestrel!")
